-- Nothing to change here. Postgres's 0027 checks a ledger entry's and a
-- balance movement's journal and organization with one foreign key of
-- (journal_id, organization_id) instead of two, each a trigger's query
-- and row lock there; SQLite's checks are lookups in the same process,
-- and changing a key here would mean rebuilding both tables. This file
-- keeps the two stores' migrations numbered alike.
SELECT 1;
