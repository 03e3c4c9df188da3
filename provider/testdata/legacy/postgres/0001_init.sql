-- Conventions (the Postgres spelling of storage/sqlite's): money is NUMERIC,
-- exact, read and written as decimal.Decimal; times are TIMESTAMPTZ
-- (microsecond precision, read back in UTC); durations BIGINT nanoseconds;
-- booleans BOOLEAN; hashes, sealed secrets and payloads BYTEA. Identifiers
-- are TEXT COLLATE "C": ORDER BY id is byte order, as in SQLite and Go's
-- strings.Compare, whatever the database's default collation. Optional
-- strings are '' rather than NULL, except where NULL keeps a constraint
-- meaningful (deposits.wallet_id).

CREATE TABLE organizations (
    id                          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    name                        TEXT        NOT NULL,
    deposits_enabled            BOOLEAN     NOT NULL,
    h2h_enabled                 BOOLEAN     NOT NULL,
    withdrawals_enabled         BOOLEAN     NOT NULL,
    instructions_window_ns      BIGINT      NOT NULL,
    redirect_window_ns          BIGINT      NOT NULL,
    deposit_fee_percent         NUMERIC     NOT NULL,
    deposit_fee_fixed           NUMERIC     NOT NULL,
    withdraw_commission_percent NUMERIC     NOT NULL,
    withdraw_commission_fixed   NUMERIC     NOT NULL,
    created_at                  TIMESTAMPTZ NOT NULL,
    updated_at                  TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
    id                         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id            TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    -- Authentication looks keys up by hash; UNIQUE is also that index.
    hash                       BYTEA       NOT NULL UNIQUE,
    hint                       TEXT        NOT NULL,
    signing_secret             BYTEA       NOT NULL,
    -- NULL when there is no previous secret (nil or empty).
    previous_signing_secret    BYTEA,
    -- NULL for the zero time.
    previous_secret_expires_at TIMESTAMPTZ,
    created_at                 TIMESTAMPTZ NOT NULL,
    expires_at                 TIMESTAMPTZ
);

CREATE INDEX api_keys_organization ON api_keys (organization_id, created_at);

CREATE TABLE wallets (
    id               TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id  TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    channel          TEXT        NOT NULL,
    operation        TEXT        NOT NULL,
    phone            TEXT        NOT NULL,
    name             TEXT        NOT NULL,
    qr_payload       TEXT        NOT NULL,
    min_amount       NUMERIC,
    max_amount       NUMERIC,
    daily_limit      NUMERIC,
    enabled          BOOLEAN     NOT NULL,
    last_assigned_at TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    -- Also the index ListWallets filters by (organization, channel, operation).
    UNIQUE (organization_id, channel, operation, phone)
);

CREATE TABLE deposits (
    id                      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id         TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    merchant_id             TEXT        NOT NULL,
    checkout_mode           TEXT        NOT NULL,
    amount                  NUMERIC     NOT NULL,
    payment_method          TEXT        NOT NULL,
    redirect_url            TEXT        NOT NULL,
    payer_phone             TEXT        NOT NULL,
    -- The compact JSON the merchant sent, byte for byte: TEXT, never JSON
    -- or JSONB, which would reorder keys and respell numbers.
    metadata                TEXT        NOT NULL,
    status                  TEXT        NOT NULL,
    action                  TEXT        NOT NULL,
    checkout_token          TEXT        NOT NULL UNIQUE,
    checkout_url            TEXT        NOT NULL,
    channel                 TEXT        NOT NULL,
    operation               TEXT        NOT NULL,
    -- NULL for a deposit without a recipient wallet (redirect actions).
    wallet_id               TEXT COLLATE "C" REFERENCES wallets (id),
    recipient_phone         TEXT        NOT NULL,
    recipient_name          TEXT        NOT NULL,
    qr_payload              TEXT        NOT NULL,
    verification_state      TEXT        NOT NULL,
    attempts_used           BIGINT      NOT NULL,
    failure_code            TEXT        NOT NULL,
    provider_transaction_id TEXT        NOT NULL,
    expires_at              TIMESTAMPTZ NOT NULL,
    created_at              TIMESTAMPTZ NOT NULL,
    updated_at              TIMESTAMPTZ NOT NULL,
    -- Idempotency of create-deposit rests on this constraint.
    UNIQUE (organization_id, merchant_id)
);

-- WalletDepositAmounts: a wallet's deposits of the day.
CREATE INDEX deposits_wallet_created ON deposits (wallet_id, created_at);
-- The expiry sweeper: live deposits past their deadline.
CREATE INDEX deposits_status_expires ON deposits (status, expires_at);
