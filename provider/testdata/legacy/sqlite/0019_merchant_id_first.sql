-- Nothing to change here. Postgres's 0019 puts merchant_id first in the
-- UNIQUE (organization_id, merchant_id) of deposits and withdrawals, so a
-- plan made on a small table cannot filter an organization's rows for it;
-- SQLite's planner always takes a UNIQUE index whose every column is
-- compared for equality, and this file keeps the two stores' migrations
-- numbered alike.
SELECT 1;
