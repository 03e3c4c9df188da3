-- The number a payer typed with a transaction ID on a wallet checkout (a
-- personal wallet's Send Money): the payment must come from it.
-- Empty for every other attempt, including those before this migration.
ALTER TABLE attempts ADD COLUMN payer_phone TEXT NOT NULL DEFAULT '';
