-- Lists newest first by keyset, so that a page costs the same at any
-- history: each served by an index in the list's order ((created_at, id) after the columns it filters on), and the
-- organization's balance movements with the balance after each.
-- Conventions as in 0001-0011. (CREATE INDEX holds off writers of the
-- table while it builds; on a large database, run the upgrade in a quiet
-- window.)

-- GET /v1/deposits: unfiltered, by status, by payment method; by provider
-- transaction ID (partial: a deposit has one only once paid; the query
-- spells the same literal).
CREATE INDEX deposits_organization_created ON deposits (organization_id, created_at, id);
CREATE INDEX deposits_organization_status ON deposits (organization_id, status, created_at, id);
CREATE INDEX deposits_organization_method ON deposits (organization_id, payment_method, created_at, id);
CREATE INDEX deposits_organization_provider_tx ON deposits (organization_id, provider_transaction_id)
    WHERE provider_transaction_id <> '';

-- GET /v1/withdraws, likewise (merchant_id has the UNIQUE index of 0003).
CREATE INDEX withdrawals_organization_created ON withdrawals (organization_id, created_at, id);
CREATE INDEX withdrawals_organization_status ON withdrawals (organization_id, status, created_at, id);
CREATE INDEX withdrawals_organization_method ON withdrawals (organization_id, payment_method, created_at, id);
CREATE INDEX withdrawals_organization_reference ON withdrawals (organization_id, provider_reference)
    WHERE provider_reference <> '';

-- GET /v1/events by type (unfiltered and by resource use the indexes of
-- 0002).
CREATE INDEX events_organization_type ON events (organization_id, type, created_at, id);

-- One row per journal and balance account (available, held) it moves:
-- what the journal added to the account and the account's balance right
-- after, returned by the account_balances upsert of the journal's own
-- statement (CreateJournal), so listing history never sums it.
CREATE TABLE balance_transactions (
    -- 'txn_' + the journal ID without 'jnl_' + '_' + account.
    id                  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    organization_id     TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    account             TEXT        NOT NULL,
    journal_id          TEXT COLLATE "C" NOT NULL REFERENCES journals (id),
    kind                TEXT        NOT NULL,
    reference           TEXT        NOT NULL,
    -- Signed, in poisha.
    amount_minor        BIGINT      NOT NULL,
    balance_after_minor BIGINT      NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL
);

CREATE INDEX balance_transactions_organization_created ON balance_transactions (organization_id, created_at, id);
CREATE INDEX balance_transactions_organization_account ON balance_transactions (organization_id, account, created_at, id);

-- Existing ledgers: each journal's totals per balance account, and the
-- running sum in journal order (created_at, id) as the balance after.
-- SHARE mode holds off writers of entries until this commits (see 0008).
LOCK TABLE ledger_entries IN SHARE MODE;
INSERT INTO balance_transactions (id, organization_id, account, journal_id, kind, reference,
    amount_minor, balance_after_minor, created_at)
SELECT 'txn_' || CASE WHEN left(t.journal_id, 4) = 'jnl_' THEN substr(t.journal_id, 5) ELSE t.journal_id END
        || '_' || t.account,
    t.organization_id, t.account, t.journal_id, t.kind, t.reference, t.amount_minor,
    SUM(t.amount_minor) OVER (PARTITION BY t.organization_id, t.account
        ORDER BY t.created_at, t.journal_id ROWS UNBOUNDED PRECEDING),
    t.created_at
FROM (
    SELECT j.id AS journal_id, j.organization_id, e.account, j.kind, j.reference, j.created_at,
        SUM(e.amount_minor) AS amount_minor
    FROM journals j JOIN ledger_entries e ON e.journal_id = j.id
    WHERE e.account IN ('available', 'held')
    GROUP BY j.id, j.organization_id, e.account, j.kind, j.reference, j.created_at
) t;
