-- Verification attempts, the ledger, the event outbox and the sandbox
-- provider's payments. Conventions as in 0001, plus: ledger money is BIGINT
-- minor units (poisha, amount * 100), as in SQLite, so that SUM is exact and
-- an amount finer than a poisha is refused by the store rather than rounded
-- by a NUMERIC(20,2) column; attempts.leased_until is NULL for "never
-- leased", which the claim's "IS NULL OR <= now" treats as due.

CREATE TABLE attempts (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    deposit_id      TEXT COLLATE "C" NOT NULL REFERENCES deposits (id),
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    channel         TEXT        NOT NULL,
    transaction_id  TEXT        NOT NULL,
    status          TEXT        NOT NULL,
    failure_code    TEXT        NOT NULL,
    tries           BIGINT      NOT NULL,
    next_run_at     TIMESTAMPTZ NOT NULL,
    lease_owner     TEXT        NOT NULL,
    leased_until    TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    -- One transaction ID pays at most one deposit, across organizations:
    -- this constraint is that guarantee (and GetAttemptByTransactionID's
    -- index).
    UNIQUE (channel, transaction_id)
);

-- ListAttempts: a deposit's attempts, oldest first.
CREATE INDEX attempts_deposit_created ON attempts (deposit_id, created_at, id);
-- ClaimDueAttempts: running attempts in due order. Partial, so resolved
-- attempts (nearly all of them, in time) are not in it; the claim query
-- spells the same literal IN list so the planner can use it.
CREATE INDEX attempts_due ON attempts (next_run_at, id)
    WHERE status IN ('processing', 'delayed');

CREATE TABLE journals (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    kind            TEXT        NOT NULL,
    reference       TEXT        NOT NULL,
    memo            TEXT        NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);

-- ListJournals: an organization's journals, oldest first.
CREATE INDEX journals_organization_created ON journals (organization_id, created_at, id);

CREATE TABLE ledger_entries (
    journal_id      TEXT COLLATE "C" NOT NULL REFERENCES journals (id),
    -- The entry's index in Journal.Entries.
    position        BIGINT      NOT NULL,
    -- The journal's organization, copied so balances need no join.
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    account         TEXT        NOT NULL,
    -- Signed amount in poisha.
    amount_minor    BIGINT      NOT NULL,
    PRIMARY KEY (journal_id, position)
);

-- AccountBalances: covering, so the SUM can read only the index.
CREATE INDEX ledger_entries_account ON ledger_entries (organization_id, account) INCLUDE (amount_minor);

CREATE TABLE events (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    type            TEXT        NOT NULL,
    resource_id     TEXT COLLATE "C" NOT NULL,
    -- The webhook body, byte for byte.
    payload         BYTEA       NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);

CREATE INDEX events_organization_created ON events (organization_id, created_at, id);
CREATE INDEX events_resource_created ON events (resource_id, created_at, id);

-- The sandbox provider's simulated wallet payments.
CREATE TABLE sandbox_payments (
    channel           TEXT        NOT NULL,
    transaction_id    TEXT        NOT NULL,
    type              TEXT        NOT NULL,
    status            TEXT        NOT NULL,
    amount            NUMERIC     NOT NULL,
    currency          TEXT        NOT NULL,
    payer_phone       TEXT        NOT NULL,
    recipient_phone   TEXT        NOT NULL,
    -- NULL for a payment that has not completed (zero CompletedAt).
    completed_at      TIMESTAMPTZ,
    time_precision_ns BIGINT      NOT NULL,
    PRIMARY KEY (channel, transaction_id)
);
