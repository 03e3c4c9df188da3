-- Storage's migration 0010 before migration lines.
-- The sandbox provider's payments and payouts belong to an organization
-- so that one tenant cannot pay another's deposits: a payment one organization records proves only its own
-- deposits, and its outage switch reaches only its own payouts. Rows from
-- before have no organization ('') and prove nothing to anyone.

ALTER TABLE sandbox_payments ADD COLUMN organization_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sandbox_payments DROP CONSTRAINT sandbox_payments_pkey;
ALTER TABLE sandbox_payments ADD PRIMARY KEY (organization_id, channel, transaction_id);

ALTER TABLE sandbox_payouts ADD COLUMN organization_id TEXT NOT NULL DEFAULT '';
