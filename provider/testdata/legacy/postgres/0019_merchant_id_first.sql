-- A lookup by merchant_id (every create's idempotency check) goes through
-- an index that starts with merchant_id, and spells the organization as
-- organization_id || '', which no index starting with organization_id can
-- serve. With UNIQUE (organization_id, merchant_id), a plan made while the
-- table was small, as on a new database before autovacuum's first ANALYZE,
-- could take a list index instead, kept in the connection's plan cache,
-- and filter all of the organization's rows on every create
-- (TestMerchantIDLookupsReadOneRow). The same constraint, its columns in
-- the other order; the console's search by merchant_id uses it too.
ALTER TABLE deposits ADD CONSTRAINT deposits_merchant_id_organization_id_key UNIQUE (merchant_id, organization_id);
ALTER TABLE deposits DROP CONSTRAINT deposits_organization_id_merchant_id_key;
ALTER TABLE withdrawals ADD CONSTRAINT withdrawals_merchant_id_organization_id_key UNIQUE (merchant_id, organization_id);
ALTER TABLE withdrawals DROP CONSTRAINT withdrawals_organization_id_merchant_id_key;
