-- Refunds (the contract's extension): a merchant gives a payer money back
-- for a succeeded deposit, in full or in parts. Conventions as in 0003's
-- withdrawals (next_run_at and leased_until are 0 for the zero time).

-- A deposit's refund totals, maintained by the transactions that move its
-- refunds (read with the deposit, never summed from its refunds):
-- refunded_amount the sum of its succeeded refunds, refund_reserved that
-- of those not failed, which bounds a new refund.
ALTER TABLE deposits ADD COLUMN refunded_amount TEXT NOT NULL DEFAULT '0';
ALTER TABLE deposits ADD COLUMN refund_reserved TEXT NOT NULL DEFAULT '0';

CREATE TABLE refunds (
    id                 TEXT    NOT NULL PRIMARY KEY,
    organization_id    TEXT    NOT NULL REFERENCES organizations (id),
    deposit_id         TEXT    NOT NULL REFERENCES deposits (id),
    merchant_id        TEXT    NOT NULL,
    amount             TEXT    NOT NULL,
    -- 1 when the request named no amount: a replay matches only another
    -- without one.
    amount_omitted     INTEGER NOT NULL CHECK (amount_omitted IN (0, 1)),
    reason             TEXT    NOT NULL,
    -- The compact JSON the merchant sent, byte for byte.
    metadata           TEXT    NOT NULL,
    status             TEXT    NOT NULL,
    failure_code       TEXT    NOT NULL,
    failure_reason     TEXT    NOT NULL,
    -- 1 when the deposit is H2H: reading the refund is signed.
    deposit_h2h        INTEGER NOT NULL CHECK (deposit_h2h IN (0, 1)),
    step               TEXT    NOT NULL,
    provider_reference TEXT    NOT NULL,
    tries              INTEGER NOT NULL,
    next_run_at        INTEGER NOT NULL,
    lease_owner        TEXT    NOT NULL,
    leased_until       INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    -- A merchant_id names one refund of the organization (merchant_id
    -- first, as 0019 made the others).
    UNIQUE (merchant_id, organization_id)
) STRICT;

-- ClaimDueRefunds: processing refunds in due order (partial; the claim
-- spells the same literal).
CREATE INDEX refunds_due ON refunds (next_run_at, id)
    WHERE status = 'processing';

-- GET /v1/refunds: keyset pages of an organization's refunds, all or one
-- deposit's.
CREATE INDEX refunds_organization_created ON refunds (organization_id, created_at, id);
CREATE INDEX refunds_deposit_created ON refunds (deposit_id, created_at, id);
