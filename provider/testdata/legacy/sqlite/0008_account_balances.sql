-- Balances cost the same at any ledger size, so that a request never sums
-- history. One row per
-- (organization, account) holds the sum of its entries; CreateJournal adds
-- each journal's totals to it in the journal's own transaction. The
-- entries stay the append-only truth: `payd admin ledger verify` recomputes
-- the rows from them.
CREATE TABLE account_balances (
    organization_id TEXT    NOT NULL REFERENCES organizations (id),
    account         TEXT    NOT NULL,
    -- Signed sum of the account's entries, in poisha.
    balance_minor   INTEGER NOT NULL,
    PRIMARY KEY (organization_id, account)
) STRICT, WITHOUT ROWID;

-- Existing ledgers: the rows are what their entries add up to. The
-- migration's transaction is the write lock, so no entry is written
-- between the sum and the rows.
INSERT INTO account_balances (organization_id, account, balance_minor)
SELECT organization_id, account, SUM(amount_minor)
FROM ledger_entries
GROUP BY organization_id, account;
