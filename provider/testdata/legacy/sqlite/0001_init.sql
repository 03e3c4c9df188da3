-- Conventions: money is TEXT in decimal.Decimal's canonical form, times are
-- INTEGER Unix microseconds (UTC), durations INTEGER nanoseconds, booleans
-- INTEGER 0/1. Optional strings are '' rather than NULL, except where NULL
-- keeps a constraint meaningful (deposits.wallet_id).

CREATE TABLE organizations (
    id                          TEXT    NOT NULL PRIMARY KEY,
    name                        TEXT    NOT NULL,
    deposits_enabled            INTEGER NOT NULL CHECK (deposits_enabled IN (0, 1)),
    h2h_enabled                 INTEGER NOT NULL CHECK (h2h_enabled IN (0, 1)),
    withdrawals_enabled         INTEGER NOT NULL CHECK (withdrawals_enabled IN (0, 1)),
    instructions_window_ns      INTEGER NOT NULL,
    redirect_window_ns          INTEGER NOT NULL,
    deposit_fee_percent         TEXT    NOT NULL,
    deposit_fee_fixed           TEXT    NOT NULL,
    withdraw_commission_percent TEXT    NOT NULL,
    withdraw_commission_fixed   TEXT    NOT NULL,
    created_at                  INTEGER NOT NULL,
    updated_at                  INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id                         TEXT    NOT NULL PRIMARY KEY,
    organization_id            TEXT    NOT NULL REFERENCES organizations (id),
    -- Authentication looks keys up by hash; UNIQUE is also that index.
    hash                       BLOB    NOT NULL UNIQUE,
    hint                       TEXT    NOT NULL,
    signing_secret             BLOB    NOT NULL,
    previous_signing_secret    BLOB,
    previous_secret_expires_at INTEGER,
    created_at                 INTEGER NOT NULL,
    expires_at                 INTEGER
) STRICT;

CREATE INDEX api_keys_organization ON api_keys (organization_id, created_at);

CREATE TABLE wallets (
    id               TEXT    NOT NULL PRIMARY KEY,
    organization_id  TEXT    NOT NULL REFERENCES organizations (id),
    channel          TEXT    NOT NULL,
    operation        TEXT    NOT NULL,
    phone            TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    qr_payload       TEXT    NOT NULL,
    min_amount       TEXT,
    max_amount       TEXT,
    daily_limit      TEXT,
    enabled          INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    last_assigned_at INTEGER,
    created_at       INTEGER NOT NULL,
    -- Also the index ListWallets filters by (organization, channel, operation).
    UNIQUE (organization_id, channel, operation, phone)
) STRICT;

CREATE TABLE deposits (
    id                      TEXT    NOT NULL PRIMARY KEY,
    organization_id         TEXT    NOT NULL REFERENCES organizations (id),
    merchant_id             TEXT    NOT NULL,
    checkout_mode           TEXT    NOT NULL,
    amount                  TEXT    NOT NULL,
    payment_method          TEXT    NOT NULL,
    redirect_url            TEXT    NOT NULL,
    payer_phone             TEXT    NOT NULL,
    -- The compact JSON the merchant sent, byte for byte.
    metadata                TEXT    NOT NULL,
    status                  TEXT    NOT NULL,
    action                  TEXT    NOT NULL,
    checkout_token          TEXT    NOT NULL UNIQUE,
    checkout_url            TEXT    NOT NULL,
    channel                 TEXT    NOT NULL,
    operation               TEXT    NOT NULL,
    -- NULL for a deposit without a recipient wallet (redirect actions).
    wallet_id               TEXT    REFERENCES wallets (id),
    recipient_phone         TEXT    NOT NULL,
    recipient_name          TEXT    NOT NULL,
    qr_payload              TEXT    NOT NULL,
    verification_state      TEXT    NOT NULL,
    attempts_used           INTEGER NOT NULL,
    failure_code            TEXT    NOT NULL,
    provider_transaction_id TEXT    NOT NULL,
    expires_at              INTEGER NOT NULL,
    created_at              INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL,
    -- Idempotency of create-deposit rests on this constraint.
    UNIQUE (organization_id, merchant_id)
) STRICT;

-- WalletDepositAmounts: a wallet's deposits of the day.
CREATE INDEX deposits_wallet_created ON deposits (wallet_id, created_at);
-- The expiry sweeper: live deposits past their deadline.
CREATE INDEX deposits_status_expires ON deposits (status, expires_at);
