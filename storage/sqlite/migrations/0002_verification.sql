-- Verification attempts, the ledger and the event outbox (the sandbox
-- provider's payments, once here, are its migration line's 0001).
-- Conventions as in 0001, plus: ledger money is INTEGER
-- minor units (poisha, amount * 100) so that SUM is exact, and
-- attempts.leased_until is 0, not NULL, for "never leased", so that
-- "leased_until <= now" holds for it without a NULL case.

CREATE TABLE attempts (
    id              TEXT    NOT NULL PRIMARY KEY,
    deposit_id      TEXT    NOT NULL REFERENCES deposits (id),
    organization_id TEXT    NOT NULL REFERENCES organizations (id),
    channel         TEXT    NOT NULL,
    transaction_id  TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    failure_code    TEXT    NOT NULL,
    tries           INTEGER NOT NULL,
    next_run_at     INTEGER NOT NULL,
    lease_owner     TEXT    NOT NULL,
    leased_until    INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    -- One transaction ID pays at most one deposit, across organizations:
    -- this constraint is that guarantee (and GetAttemptByTransactionID's
    -- index).
    UNIQUE (channel, transaction_id)
) STRICT;

-- ListAttempts: a deposit's attempts, oldest first.
CREATE INDEX attempts_deposit_created ON attempts (deposit_id, created_at, id);
-- ClaimDueAttempts: running attempts in due order. Partial, so resolved
-- attempts (nearly all of them, in time) are not in it; the claim query
-- spells the same literal IN list so the planner can use it.
CREATE INDEX attempts_due ON attempts (next_run_at, id)
    WHERE status IN ('processing', 'delayed');

CREATE TABLE journals (
    id              TEXT    NOT NULL PRIMARY KEY,
    organization_id TEXT    NOT NULL REFERENCES organizations (id),
    kind            TEXT    NOT NULL,
    reference       TEXT    NOT NULL,
    memo            TEXT    NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

-- ListJournals: an organization's journals, oldest first.
CREATE INDEX journals_organization_created ON journals (organization_id, created_at, id);

CREATE TABLE ledger_entries (
    journal_id      TEXT    NOT NULL REFERENCES journals (id),
    -- The entry's index in Journal.Entries.
    position        INTEGER NOT NULL,
    -- The journal's organization, copied so balances need no join.
    organization_id TEXT    NOT NULL REFERENCES organizations (id),
    account         TEXT    NOT NULL,
    -- Signed amount in poisha.
    amount_minor    INTEGER NOT NULL,
    PRIMARY KEY (journal_id, position)
) STRICT;

-- AccountBalances: covering, so the SUM reads only the index.
CREATE INDEX ledger_entries_account ON ledger_entries (organization_id, account, amount_minor);

CREATE TABLE events (
    id              TEXT    NOT NULL PRIMARY KEY,
    organization_id TEXT    NOT NULL REFERENCES organizations (id),
    type            TEXT    NOT NULL,
    resource_id     TEXT    NOT NULL,
    -- The webhook body, byte for byte.
    payload         BLOB    NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX events_organization_created ON events (organization_id, created_at, id);
CREATE INDEX events_resource_created ON events (resource_id, created_at, id);
