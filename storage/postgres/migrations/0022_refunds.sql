-- Refunds (the contract's extension): a merchant gives a payer money back
-- for a succeeded deposit, in full or in parts. Conventions as in 0003's
-- withdrawals (next_run_at and leased_until are NULL for the zero time).

-- A deposit's refund totals, maintained by the transactions that move its
-- refunds (read with the deposit, never summed from its refunds):
-- refunded_amount the sum of its succeeded refunds, refund_reserved that
-- of those not failed, which bounds a new refund.
ALTER TABLE deposits ADD COLUMN refunded_amount NUMERIC NOT NULL DEFAULT 0;
ALTER TABLE deposits ADD COLUMN refund_reserved NUMERIC NOT NULL DEFAULT 0;

CREATE TABLE refunds (
    id                 TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id    TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    deposit_id         TEXT COLLATE "C" NOT NULL REFERENCES deposits (id),
    merchant_id        TEXT        NOT NULL,
    amount             NUMERIC     NOT NULL,
    -- true when the request named no amount: a replay matches only another
    -- without one.
    amount_omitted     BOOLEAN     NOT NULL,
    reason             TEXT        NOT NULL,
    -- The compact JSON the merchant sent, byte for byte (never JSONB).
    metadata           TEXT        NOT NULL,
    status             TEXT        NOT NULL,
    failure_code       TEXT        NOT NULL,
    failure_reason     TEXT        NOT NULL,
    -- true when the deposit is H2H: reading the refund is signed.
    deposit_h2h        BOOLEAN     NOT NULL,
    step               TEXT        NOT NULL,
    provider_reference TEXT        NOT NULL,
    tries              BIGINT      NOT NULL,
    next_run_at        TIMESTAMPTZ,
    lease_owner        TEXT        NOT NULL,
    leased_until       TIMESTAMPTZ,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    -- A merchant_id names one refund of the organization (merchant_id
    -- first, as 0019 made the others).
    UNIQUE (merchant_id, organization_id)
);

-- ClaimDueRefunds: processing refunds in due order (never scheduled
-- first; partial, the claim spells the same literal).
CREATE INDEX refunds_due ON refunds (next_run_at NULLS FIRST, id)
    WHERE status = 'processing';

-- GET /v1/refunds: keyset pages of an organization's refunds, all or one
-- deposit's.
CREATE INDEX refunds_organization_created ON refunds (organization_id, created_at, id);
CREATE INDEX refunds_deposit_created ON refunds (deposit_id, created_at, id);
