-- The operator console: operators, their sessions, payment
-- links, and the indexes of the console's searches. Conventions as in
-- 0001-0011: times are TIMESTAMPTZ, amounts NUMERIC, IDs in the C collation.

CREATE TABLE operators (
    id               TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
    email            TEXT    NOT NULL UNIQUE,
    role             TEXT    NOT NULL,
    -- '' for a platform operator, who sees every organization.
    organization_id  TEXT COLLATE "C"    NOT NULL,
    -- The console's argon2id encoding; '' until the setup is completed.
    password_hash    TEXT    NOT NULL,
    -- Sealed under the master key; NULL without a second factor.
    totp_secret      BYTEA,
    last_totp_step   BIGINT NOT NULL,
    -- SHA-256 of the one-time setup link's token; NULL once used.
    setup_token_hash BYTEA    UNIQUE,
    setup_expires_at TIMESTAMPTZ,
    failed_logins    INTEGER NOT NULL,
    locked_until     TIMESTAMPTZ,
    disabled_at      TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);

CREATE INDEX operators_organization ON operators (organization_id, created_at, id);

CREATE TABLE operator_sessions (
    id           TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
    -- SHA-256 of the cookie's token; the token itself is never stored.
    token_hash   BYTEA    NOT NULL UNIQUE,
    operator_id  TEXT COLLATE "C"    NOT NULL REFERENCES operators (id),
    created_at   TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    revoked_at   TIMESTAMPTZ
);

-- RevokeOperatorSessions: an operator's open sessions.
CREATE INDEX operator_sessions_open ON operator_sessions (operator_id) WHERE revoked_at IS NULL;

CREATE TABLE payment_links (
    id              TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
    organization_id TEXT COLLATE "C"    NOT NULL REFERENCES organizations (id),
    amount          NUMERIC    NOT NULL,
    note            TEXT    NOT NULL,
    token           TEXT COLLATE "C"    NOT NULL UNIQUE,
    deposit_id      TEXT COLLATE "C"    NOT NULL,
    deposits        INTEGER NOT NULL,
    created_by      TEXT    NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);

CREATE INDEX payment_links_organization ON payment_links (organization_id, created_at, id);

-- The console's searches of an organization's deposits and withdrawals,
-- newest first: by creation (and date range), by status and withdrawals by
-- creation through 0012's list indexes; by payer phone through this one. A
-- transaction ID is found through attempts' unique (channel,
-- transaction_id); a merchant_id through the UNIQUE of 0001.
CREATE INDEX deposits_organization_phone ON deposits (organization_id, payer_phone, created_at, id);
