-- The sandbox provider's simulated wallet payments (storage's migration
-- 0002 before migration lines).

CREATE TABLE sandbox_payments (
    channel           TEXT    NOT NULL,
    transaction_id    TEXT    NOT NULL,
    type              TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    amount            TEXT    NOT NULL,
    currency          TEXT    NOT NULL,
    payer_phone       TEXT    NOT NULL,
    recipient_phone   TEXT    NOT NULL,
    -- NULL for a payment that has not completed (zero CompletedAt).
    completed_at      INTEGER,
    time_precision_ns INTEGER NOT NULL,
    PRIMARY KEY (channel, transaction_id)
) STRICT;
