-- The append-only audit log of administrative actions (organizations, API
-- keys, signing secrets, wallets, balance adjustments, webhooks). Conventions
-- as in 0001-0004. The store has no method that changes or removes an
-- entry, and these triggers refuse UPDATE and DELETE, so not even a
-- hand-written statement rewrites history.

CREATE TABLE audit_log (
    id              TEXT    NOT NULL PRIMARY KEY,
    actor           TEXT    NOT NULL,
    action          TEXT    NOT NULL,
    -- No foreign key: the log outlives whatever it names.
    organization_id TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    -- A JSON object of strings; never a secret.
    details         TEXT    NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

-- ListAudit: an organization's entries, oldest first.
CREATE INDEX audit_log_organization_created ON audit_log (organization_id, created_at, id);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
