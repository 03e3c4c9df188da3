-- A transaction ID that one organization submitted no longer blocks
-- another (the contract's rule, amended 2026-11-27): within an
-- organization a submitted ID stays used, by attempts' UNIQUE (channel,
-- transaction_id, organization_id); across organizations only a succeeded
-- ID is, by the primary key of succeeded_transactions, written in the
-- transaction of the success. SQLite cannot drop a table's UNIQUE, so
-- attempts is rebuilt with the new one, its rows and indexes as they were.

CREATE TABLE attempts_by_org (
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
    payer_phone     TEXT    NOT NULL DEFAULT '',
    -- Channel and ID first: the console's search of an ID across
    -- organizations uses it too.
    UNIQUE (channel, transaction_id, organization_id)
) STRICT;

INSERT INTO attempts_by_org (id, deposit_id, organization_id, channel, transaction_id, status, failure_code,
    tries, next_run_at, lease_owner, leased_until, created_at, updated_at, payer_phone)
SELECT id, deposit_id, organization_id, channel, transaction_id, status, failure_code,
    tries, next_run_at, lease_owner, leased_until, created_at, updated_at, payer_phone
FROM attempts;

DROP TABLE attempts;
ALTER TABLE attempts_by_org RENAME TO attempts;

CREATE INDEX attempts_deposit_created ON attempts (deposit_id, created_at, id);
CREATE INDEX attempts_due ON attempts (next_run_at, id)
    WHERE status IN ('processing', 'delayed');

-- One row per payment that succeeded a deposit: the attempt that did.
CREATE TABLE succeeded_transactions (
    channel        TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    attempt_id     TEXT NOT NULL REFERENCES attempts (id),
    PRIMARY KEY (channel, transaction_id)
) STRICT;

-- Until now an ID was unique across organizations, so the succeeded
-- attempts are one per (channel, transaction_id).
INSERT INTO succeeded_transactions (channel, transaction_id, attempt_id)
SELECT channel, transaction_id, id FROM attempts WHERE status = 'succeeded';
