-- Refunds on the SMS inbox: a refund is sent back to the payer by an
-- operator, from a wallet of the organization, exactly as a withdrawal's
-- payout is, so it waits in the same queue and a debit SMS matches one
-- item of that queue, payout or refund, or none. deposit_id names the
-- deposit a refund gives back; it is empty for a withdrawal's payout.
ALTER TABLE manual_payouts ADD COLUMN deposit_id TEXT COLLATE "C" NOT NULL DEFAULT '';
