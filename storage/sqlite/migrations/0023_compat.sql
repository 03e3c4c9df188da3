-- The UddoktaPay-compatible checkout (the contract's extension): an
-- organization's compat key, which opens only those endpoints, and the
-- invoices created through them. An invoice is a payment link (its token is
-- the invoice's ID) with what the merchant's plugin sent alongside.

-- One key per organization; enabling again replaces it. It is found by its
-- SHA-256; the key itself is kept only sealed under the master key, since
-- the IPN must carry it (UddoktaPay's plugins check it there).
CREATE TABLE compat_keys (
    organization_id TEXT    NOT NULL PRIMARY KEY REFERENCES organizations (id),
    hash            BLOB    NOT NULL UNIQUE,
    sealed          BLOB    NOT NULL,
    hint            TEXT    NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE compat_invoices (
    link_id         TEXT    NOT NULL PRIMARY KEY REFERENCES payment_links (id),
    organization_id TEXT    NOT NULL REFERENCES organizations (id),
    full_name       TEXT    NOT NULL,
    email           TEXT    NOT NULL,
    metadata        TEXT    NOT NULL,
    redirect_url    TEXT    NOT NULL,
    return_type     TEXT    NOT NULL,
    cancel_url      TEXT    NOT NULL,
    webhook_url     TEXT    NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

-- The IPNs of paid invoices to post to their webhook_url, written with the
-- payment and retried on the webhooks' schedule; times in the manner of
-- 0004's deliveries (0 or the epoch for none).
CREATE TABLE compat_ipns (
    link_id          TEXT    NOT NULL PRIMARY KEY REFERENCES compat_invoices (link_id),
    organization_id  TEXT    NOT NULL REFERENCES organizations (id),
    status           TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  INTEGER NOT NULL,
    lease_owner      TEXT    NOT NULL,
    leased_until     INTEGER NOT NULL,
    last_status_code INTEGER NOT NULL,
    last_error       TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
) STRICT;

-- ClaimDueCompatIPNs: the pending ones by when they are due.
CREATE INDEX compat_ipns_due ON compat_ipns (next_attempt_at, link_id) WHERE status = 'pending';
