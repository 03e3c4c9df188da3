-- The append-only audit log of administrative actions (organizations, API
-- keys, signing secrets, wallets, balance adjustments, webhooks). Conventions
-- as in 0001-0004. The store has no method that changes or removes an
-- entry, and these triggers refuse UPDATE, DELETE and TRUNCATE, so not even
-- a hand-written statement rewrites history.

CREATE TABLE audit_log (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    actor           TEXT        NOT NULL,
    action          TEXT        NOT NULL,
    -- No foreign key: the log outlives whatever it names.
    organization_id TEXT COLLATE "C" NOT NULL,
    subject         TEXT        NOT NULL,
    -- A JSON object of strings; never a secret.
    details         TEXT        NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);

-- ListAudit: an organization's entries, oldest first.
CREATE INDEX audit_log_organization_created ON audit_log (organization_id, created_at, id);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END
$$;

CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
