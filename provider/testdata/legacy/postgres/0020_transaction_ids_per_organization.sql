-- A transaction ID that one organization submitted no longer blocks
-- another (the contract's rule, amended 2026-11-27): within an
-- organization a submitted ID stays used, by attempts' UNIQUE (channel,
-- transaction_id, organization_id); across organizations only a succeeded
-- ID is, by the primary key of succeeded_transactions, written in the
-- transaction of the success. Channel and ID come first in the new UNIQUE:
-- the console's search of an ID across organizations uses it too.
ALTER TABLE attempts ADD CONSTRAINT attempts_channel_transaction_id_organization_id_key
    UNIQUE (channel, transaction_id, organization_id);
ALTER TABLE attempts DROP CONSTRAINT attempts_channel_transaction_id_key;

-- One row per payment that succeeded a deposit: the attempt that did.
CREATE TABLE succeeded_transactions (
    channel        TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    attempt_id     TEXT COLLATE "C" NOT NULL REFERENCES attempts (id),
    PRIMARY KEY (channel, transaction_id)
);

-- Until now an ID was unique across organizations, so the succeeded
-- attempts are one per (channel, transaction_id).
INSERT INTO succeeded_transactions (channel, transaction_id, attempt_id)
SELECT channel, transaction_id, id FROM attempts WHERE status = 'succeeded';
