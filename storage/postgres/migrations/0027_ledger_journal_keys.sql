-- A ledger entry and a balance movement each checked two foreign keys as
-- it was inserted, to its journal and to its organization: two lookups
-- and row locks each, eight for a withdrawal's hold. One key of
-- (journal_id, organization_id) to journals checks both at once, and more:
-- that the row's organization is its journal's, whose own key checks the
-- organization. NOT VALID, then VALIDATE: the check of the rows already
-- there does not stop writes to the two tables meanwhile.
ALTER TABLE journals ADD CONSTRAINT journals_id_organization_id_key UNIQUE (id, organization_id);

ALTER TABLE ledger_entries
    ADD CONSTRAINT ledger_entries_journal_organization_fkey
        FOREIGN KEY (journal_id, organization_id) REFERENCES journals (id, organization_id) NOT VALID,
    DROP CONSTRAINT ledger_entries_journal_id_fkey,
    DROP CONSTRAINT ledger_entries_organization_id_fkey;
ALTER TABLE ledger_entries VALIDATE CONSTRAINT ledger_entries_journal_organization_fkey;

ALTER TABLE balance_transactions
    ADD CONSTRAINT balance_transactions_journal_organization_fkey
        FOREIGN KEY (journal_id, organization_id) REFERENCES journals (id, organization_id) NOT VALID,
    DROP CONSTRAINT balance_transactions_journal_id_fkey,
    DROP CONSTRAINT balance_transactions_organization_id_fkey;
ALTER TABLE balance_transactions VALIDATE CONSTRAINT balance_transactions_journal_organization_fkey;
