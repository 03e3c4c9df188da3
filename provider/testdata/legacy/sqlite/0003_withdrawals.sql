-- Withdrawals and their payouts, per-method fees, journal actors and the
-- sandbox provider's payouts. Conventions as in 0001 and 0002; the
-- withdrawals' next_run_at and leased_until are 0, not NULL, for the zero
-- time (as attempts.leased_until), so "<= now" holds for them without a
-- NULL case.

-- An organization's engine.MethodFees as JSON: decimals are JSON strings,
-- so they round-trip exactly. '{}' is no overrides.
ALTER TABLE organizations ADD COLUMN method_fees TEXT NOT NULL DEFAULT '{}';

-- Who made a manual adjustment; '' for the engine's own journals.
ALTER TABLE journals ADD COLUMN actor TEXT NOT NULL DEFAULT '';

CREATE TABLE withdrawals (
    id                 TEXT    NOT NULL PRIMARY KEY,
    organization_id    TEXT    NOT NULL REFERENCES organizations (id),
    merchant_id        TEXT    NOT NULL,
    amount             TEXT    NOT NULL,
    commission         TEXT    NOT NULL,
    payment_method     TEXT    NOT NULL,
    -- The recipient: a mobile number, or a bank account number.
    account            TEXT    NOT NULL,
    -- The compact JSON the merchant sent, byte for byte.
    metadata           TEXT    NOT NULL,
    status             TEXT    NOT NULL,
    payout_step        TEXT    NOT NULL,
    provider_reference TEXT    NOT NULL,
    failure_reason     TEXT    NOT NULL,
    tries              INTEGER NOT NULL,
    next_run_at        INTEGER NOT NULL,
    lease_owner        TEXT    NOT NULL,
    leased_until       INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    -- Idempotency of create-withdrawal rests on this constraint: it is what
    -- keeps a merchant_id from paying out twice, even when requests race.
    UNIQUE (organization_id, merchant_id)
) STRICT;

-- ClaimDuePayouts: processing withdrawals in due order. Partial, so settled
-- withdrawals are not in it; the claim query spells the same literal so the
-- planner can use it.
CREATE INDEX withdrawals_due ON withdrawals (next_run_at, id)
    WHERE status = 'processing';

-- The sandbox provider's simulated payouts, by the engine's idempotency key.
CREATE TABLE sandbox_payouts (
    idempotency_key TEXT    NOT NULL PRIMARY KEY,
    reference       TEXT    NOT NULL,
    method          TEXT    NOT NULL,
    account         TEXT    NOT NULL,
    amount          TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    -- NULL for a payout that has not completed (zero CompletedAt).
    completed_at    INTEGER
) STRICT;
