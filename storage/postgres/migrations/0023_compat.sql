-- The UddoktaPay-compatible checkout (the contract's extension): an
-- organization's compat key, which opens only those endpoints, and the
-- invoices created through them. An invoice is a payment link (its token is
-- the invoice's ID) with what the merchant's plugin sent alongside.

-- One key per organization; enabling again replaces it. Only the SHA-256
-- of the key is stored.
CREATE TABLE compat_keys (
    organization_id TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES organizations (id),
    hash            BYTEA   NOT NULL UNIQUE,
    hint            TEXT    NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);

CREATE TABLE compat_invoices (
    link_id         TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES payment_links (id),
    organization_id TEXT COLLATE "C" NOT NULL REFERENCES organizations (id),
    full_name       TEXT    NOT NULL,
    email           TEXT    NOT NULL,
    metadata        TEXT    NOT NULL,
    redirect_url    TEXT    NOT NULL,
    return_type     TEXT    NOT NULL,
    cancel_url      TEXT    NOT NULL,
    webhook_url     TEXT    NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);
