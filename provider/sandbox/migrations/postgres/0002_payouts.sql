-- The sandbox provider's simulated payouts, by the engine's idempotency
-- key (storage's migration 0003 before migration lines).

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
