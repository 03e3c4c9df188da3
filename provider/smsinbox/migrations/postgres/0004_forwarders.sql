-- Storage's migration 0015 before migration lines.
-- Off-the-shelf Android forwarders on the SMS inbox: a device's
-- own silence, its signing secret, the SIM slot of each wallet it proves,
-- and the signatures it already used. Conventions as in 0001-0007.

-- Microseconds a device may go without reporting before its wallets leave
-- the recipient pool; 0 means the server's --sms-silence.
ALTER TABLE sms_devices ADD COLUMN silence BIGINT NOT NULL DEFAULT 0;
-- The secret its app signs with, sealed under the master key (the HMAC
-- needs the secret itself); empty when the device does not sign.
ALTER TABLE sms_devices ADD COLUMN signing_secret BYTEA NOT NULL DEFAULT '';

-- The SIM slot (1, 2, ...) whose messages prove the wallet; 0: any slot,
-- the only wallet of its channel on its device.
ALTER TABLE sms_wallets ADD COLUMN sim_slot INTEGER NOT NULL DEFAULT 0;

-- Each signature a device's post carried, until its timestamp is too old
-- to be accepted anyway: a replayed request is refused.
CREATE TABLE sms_device_signatures (
    device_id  TEXT COLLATE "C" NOT NULL REFERENCES sms_devices (id),
    -- SHA-256 of the signature.
    signature  BYTEA       NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (device_id, signature)
);

CREATE INDEX sms_device_signatures_expiry ON sms_device_signatures (device_id, expires_at);
