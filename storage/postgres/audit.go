package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/payd-engine/payd/engine"
)

// The audit log: append-only, so there is an insert and a list and nothing
// else (0005's triggers refuse UPDATE, DELETE and TRUNCATE).

const auditColumns = `id, actor, action, organization_id, subject, details, created_at`

// auditDetailsCol scans the details JSON object; {} reads back as nil.
type auditDetailsCol struct{ m *map[string]string }

func (c auditDetailsCol) ScanBytes(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("postgres: audit details: %w", err)
	}
	if len(m) == 0 {
		m = nil
	}
	*c.m = m
	return nil
}

func scanAudit(row scanner) (*engine.AuditEntry, error) {
	var e engine.AuditEntry
	err := row.Scan(&e.ID, &e.Actor, &e.Action, &e.OrganizationID, &e.Subject, auditDetailsCol{&e.Details}, timeCol{&e.CreatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	return &e, nil
}

func (t *tx) AppendAudit(ctx context.Context, e *engine.AuditEntry) error {
	details := e.Details
	if details == nil {
		details = map[string]string{}
	}
	b, err := json.Marshal(details)
	if err != nil {
		return err
	}
	return t.insert(ctx, "audit entry "+e.ID, `INSERT INTO audit_log (`+auditColumns+`) VALUES (`+params(7)+`)`,
		e.ID, e.Actor, e.Action, e.OrganizationID, e.Subject, string(b), e.CreatedAt)
}

func (t *tx) ListAudit(ctx context.Context, p engine.ListAuditParams) ([]*engine.AuditEntry, error) {
	var f filter
	f.eq("organization_id", p.OrganizationID)
	q := `SELECT ` + auditColumns + ` FROM audit_log` + f.where() + ` ORDER BY created_at, id` + f.limit(p.Limit)
	return queryList(ctx, t, scanAudit, q, f.args...)
}
