-- Withdrawals and their payouts, per-method fees, journal actors and the
-- sandbox provider's payouts. Conventions as in 0001 and 0002; the
-- withdrawals' next_run_at and leased_until are NULL for the zero time (as
-- attempts.leased_until), which the claim's "IS NULL OR <= now" treats as
-- due and its "NULLS FIRST" order puts first.

-- An organization's engine.MethodFees as JSON text: decimals are JSON
-- strings, so they round-trip exactly. '{}' is no overrides.
ALTER TABLE organizations ADD COLUMN method_fees TEXT NOT NULL DEFAULT '{}';

-- Who made a manual adjustment; '' for the engine's own journals.
ALTER TABLE journals ADD COLUMN actor TEXT NOT NULL DEFAULT '';

CREATE TABLE withdrawals (
    id                 TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id    TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    merchant_id        TEXT        NOT NULL,
    amount             NUMERIC     NOT NULL,
    commission         NUMERIC     NOT NULL,
    payment_method     TEXT        NOT NULL,
    -- The recipient: a mobile number, or a bank account number.
    account            TEXT        NOT NULL,
    -- The compact JSON the merchant sent, byte for byte (never JSONB).
    metadata           TEXT        NOT NULL,
    status             TEXT        NOT NULL,
    payout_step        TEXT        NOT NULL,
    provider_reference TEXT        NOT NULL,
    failure_reason     TEXT        NOT NULL,
    tries              BIGINT      NOT NULL,
    next_run_at        TIMESTAMPTZ,
    lease_owner        TEXT        NOT NULL,
    leased_until       TIMESTAMPTZ,
    created_at         TIMESTAMPTZ NOT NULL,
    updated_at         TIMESTAMPTZ NOT NULL,
    -- Idempotency of create-withdrawal rests on this constraint: it is what
    -- keeps a merchant_id from paying out twice, even when requests race.
    UNIQUE (organization_id, merchant_id)
);

-- ClaimDuePayouts: processing withdrawals in due order (never scheduled
-- first). Partial, so settled withdrawals are not in it; the claim query
-- spells the same literal so the planner can use it.
CREATE INDEX withdrawals_due ON withdrawals (next_run_at NULLS FIRST, id)
    WHERE status = 'processing';

-- The sandbox provider's simulated payouts, by the engine's idempotency key.
CREATE TABLE sandbox_payouts (
    idempotency_key TEXT        NOT NULL PRIMARY KEY,
    reference       TEXT        NOT NULL,
    method          TEXT        NOT NULL,
    account         TEXT        NOT NULL,
    amount          NUMERIC     NOT NULL,
    status          TEXT        NOT NULL,
    reason          TEXT        NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    -- NULL for a payout that has not completed (zero CompletedAt).
    completed_at    TIMESTAMPTZ
);
