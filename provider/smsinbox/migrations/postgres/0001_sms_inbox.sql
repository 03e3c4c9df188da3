-- The SMS inbox provider (provider/smsinbox): the phones that forward the
-- receiving wallets' SMS, the balance chain of each wallet they prove, every
-- message they forward, and the operator's queue of manual payouts.
-- Conventions as storage's (storage's migration 0006 before migration
-- lines, which also gave wallets live_until).

CREATE TABLE sms_devices (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    name            TEXT    NOT NULL,
    -- SHA-256 of the device token; UNIQUE is also authentication's index.
    token_hash      BYTEA   NOT NULL UNIQUE,
    token_hint      TEXT    NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    last_seen_at    TIMESTAMPTZ,
    revoked_at      TIMESTAMPTZ
);

CREATE INDEX sms_devices_organization ON sms_devices (organization_id, created_at, id);

-- A wallet whose payments a device proves, and its balance chain: the last
-- balance known to be genuine, NULL until the operator anchors it.
CREATE TABLE sms_wallets (
    wallet_id          TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES wallets (id),
    organization_id    TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    device_id          TEXT COLLATE "C" NOT NULL REFERENCES sms_devices (id),
    channel            TEXT    NOT NULL,
    balance            NUMERIC,
    -- The message that set the balance; '' when the operator set it.
    balance_message_id TEXT COLLATE "C" NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL
);

CREATE INDEX sms_wallets_device ON sms_wallets (device_id);

CREATE TABLE sms_messages (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    device_id       TEXT COLLATE "C" NOT NULL REFERENCES sms_devices (id),
    -- '' when none of the device's wallets is on the message's channel.
    wallet_id       TEXT COLLATE "C" NOT NULL,
    sender          TEXT    NOT NULL,
    body            TEXT    NOT NULL,
    -- SHA-256 of sender and body: the same SMS forwarded again.
    fingerprint     BYTEA   NOT NULL,
    received_at     TIMESTAMPTZ NOT NULL,
    status          TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    duplicate_of    TEXT COLLATE "C" NOT NULL,
    -- The parse result: kind '' and the amounts NULL when the body was
    -- not parsed.
    channel         TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    credit          BOOLEAN NOT NULL,
    amount          NUMERIC,
    fee             NUMERIC,
    commission      NUMERIC,
    counterparty    TEXT    NOT NULL,
    transaction_id  TEXT    NOT NULL,
    occurred_at     TIMESTAMPTZ,
    balance         NUMERIC,
    reference       TEXT    NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);

-- One original per SMS: forwarded copies are stored as 'duplicate'.
CREATE UNIQUE INDEX sms_messages_fingerprint ON sms_messages (organization_id, fingerprint)
    WHERE status <> 'duplicate';
-- LookupTransaction and conflicting copies.
CREATE INDEX sms_messages_transaction ON sms_messages (organization_id, channel, transaction_id)
    WHERE transaction_id <> '';
-- The messages waiting for their wallet's balance chain.
CREATE INDEX sms_messages_held ON sms_messages (wallet_id, received_at, id) WHERE status = 'held';
-- ListSMS: newest first.
CREATE INDEX sms_messages_organization ON sms_messages (organization_id, created_at, id);

-- Payouts an operator sends by hand, keyed like any provider's by the
-- withdrawal's ID.
CREATE TABLE manual_payouts (
    idempotency_key TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    method          TEXT    NOT NULL,
    account         TEXT    NOT NULL,
    amount          NUMERIC NOT NULL,
    status          TEXT    NOT NULL,
    -- The operator's own transaction ID, once sent.
    reference       TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    operator        TEXT    NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    completed_at    TIMESTAMPTZ
);

CREATE INDEX manual_payouts_status ON manual_payouts (status, created_at, idempotency_key);
