-- Off-the-shelf Android forwarders on the SMS inbox: a device's
-- own silence, its signing secret, the SIM slot of each wallet it proves,
-- and the signatures it already used. Conventions as in 0001-0007.

-- Microseconds a device may go without reporting before its wallets leave
-- the recipient pool; 0 means the server's --sms-silence.
ALTER TABLE sms_devices ADD COLUMN silence INTEGER NOT NULL DEFAULT 0;
-- The secret its app signs with, sealed under the master key (the HMAC
-- needs the secret itself); empty when the device does not sign.
ALTER TABLE sms_devices ADD COLUMN signing_secret BLOB NOT NULL DEFAULT x'';

-- The SIM slot (1, 2, ...) whose messages prove the wallet; 0: any slot,
-- the only wallet of its channel on its device.
ALTER TABLE sms_wallets ADD COLUMN sim_slot INTEGER NOT NULL DEFAULT 0;

-- Each signature a device's post carried, until its timestamp is too old
-- to be accepted anyway: a replayed request is refused.
CREATE TABLE sms_device_signatures (
    device_id  TEXT    NOT NULL REFERENCES sms_devices (id),
    -- SHA-256 of the signature.
    signature  BLOB    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (device_id, signature)
) STRICT, WITHOUT ROWID;

CREATE INDEX sms_device_signatures_expiry ON sms_device_signatures (device_id, expires_at);
