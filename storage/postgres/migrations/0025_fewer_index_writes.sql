-- Fewer index entries written per deposit and per balance movement, every
-- list still read from an index (BENCHMARKS.md lists the indexes a deposit
-- create maintains; a test holds the list).

-- The expiry sweep reads only pending deposits: its index holds only them,
-- so a deposit leaves it when it is submitted or ends and is never written
-- to it again. The query spells the literal.
DROP INDEX deposits_status_expires;
CREATE INDEX deposits_expirable ON deposits (expires_at, id) WHERE status = 'pending';

-- A daily limit sums a wallet's deposits; a redirect deposit has no
-- wallet.
DROP INDEX deposits_wallet_created;
CREATE INDEX deposits_wallet_created ON deposits (wallet_id, created_at) WHERE wallet_id IS NOT NULL;

-- The console finds deposits by a payer's phone, never by none (the query
-- spells the literal).
DROP INDEX deposits_organization_phone;
CREATE INDEX deposits_organization_phone ON deposits (organization_id, payer_phone, created_at, id)
    WHERE payer_phone <> '';

-- Balance movements are of two accounts, available and held: the
-- unfiltered list merges the two ranges of the by-account index, one page
-- of each.
DROP INDEX balance_transactions_organization_created;
