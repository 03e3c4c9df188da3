-- Storage's migration 0010 before migration lines.
-- The sandbox provider's payments and payouts belong to an organization
-- so that one tenant cannot pay another's deposits: a payment one organization records proves only its own
-- deposits, and its outage switch reaches only its own payouts. Rows from
-- before have no organization ('') and prove nothing to anyone.

CREATE TABLE sandbox_payments_by_org (
    organization_id   TEXT    NOT NULL,
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
    PRIMARY KEY (organization_id, channel, transaction_id)
) STRICT;

INSERT INTO sandbox_payments_by_org (organization_id, channel, transaction_id, type, status, amount, currency,
    payer_phone, recipient_phone, completed_at, time_precision_ns)
SELECT '', channel, transaction_id, type, status, amount, currency,
    payer_phone, recipient_phone, completed_at, time_precision_ns
FROM sandbox_payments;

DROP TABLE sandbox_payments;
ALTER TABLE sandbox_payments_by_org RENAME TO sandbox_payments;

ALTER TABLE sandbox_payouts ADD COLUMN organization_id TEXT NOT NULL DEFAULT '';
