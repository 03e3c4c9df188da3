-- The SMS inbox provider's tables, once here, are its migration line's
-- 0001; what stays is the engine's.

-- When set, the wallet is in the recipient pool only until then: its phone
-- must report again (engine.Wallet.LiveUntil).
ALTER TABLE wallets ADD COLUMN live_until INTEGER;
