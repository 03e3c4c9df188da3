-- The bKash tokenized checkout provider (provider/bkash): each connected
-- organization's API credentials and its shared token, and the checkout
-- payments it opened.

-- credentials and token are sealed with the master key (engine.Keyring).
-- token_fresh_until is when the token must be renewed; lease_until marks a
-- renewal under way, so one caller of every payd instance renews it.
CREATE TABLE bkash_accounts (
    organization_id   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    credentials       BYTEA       NOT NULL,
    token             BYTEA,
    token_fresh_until TIMESTAMPTZ,
    lease_until       TIMESTAMPTZ,
    connected_at      TIMESTAMPTZ NOT NULL
);

-- A checkout payment created for a redirect deposit. state: created (the
-- payer is on bKash's page), executing (execute was sent, once), executed
-- (bKash reported it completed: trx_id set, not yet handed to the engine),
-- submitted, cancelled, failed, closed (its deposit ended without it).
CREATE TABLE bkash_payments (
    payment_id      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL,
    deposit_id      TEXT COLLATE "C" NOT NULL UNIQUE,
    checkout_token  TEXT        NOT NULL,
    amount          NUMERIC     NOT NULL,
    state           TEXT        NOT NULL,
    trx_id          TEXT COLLATE "C" NOT NULL,
    payer_phone     TEXT        NOT NULL,
    completed_at    TIMESTAMPTZ,
    expires_at      TIMESTAMPTZ NOT NULL,
    next_check_at   TIMESTAMPTZ NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);

CREATE UNIQUE INDEX bkash_payments_trx ON bkash_payments (organization_id, trx_id) WHERE trx_id <> '';
-- The payments whose outcome is still to learn, by when to ask bKash.
CREATE INDEX bkash_payments_due ON bkash_payments (next_check_at)
    WHERE state IN ('created', 'executing', 'executed');
