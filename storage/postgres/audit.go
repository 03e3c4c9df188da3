package postgres

import (
	"context"
	"fmt"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// The audit log: append-only, so there is an insert and a list and nothing
// else (0005's triggers refuse UPDATE, DELETE and TRUNCATE).

const auditColumns = schema.AuditColumns

// auditDetailsCol scans the details JSON object; {} reads back as nil.
type auditDetailsCol struct{ m *map[string]string }

func (c auditDetailsCol) ScanBytes(b []byte) error {
	m, err := schema.ParseAuditDetails(b)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
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
	details, err := schema.AuditDetailsJSON(e.Details)
	if err != nil {
		return err
	}
	return t.insert(ctx, "audit entry "+e.ID, `INSERT INTO audit_log (`+auditColumns+`) VALUES (`+params(7)+`)`,
		e.ID, e.Actor, e.Action, e.OrganizationID, e.Subject, details, e.CreatedAt)
}

func (t *tx) ListAudit(ctx context.Context, p engine.ListAuditParams) ([]*engine.AuditEntry, error) {
	var f filter
	f.eq("organization_id", p.OrganizationID)
	q := `SELECT ` + auditColumns + ` FROM audit_log` + f.where() + ` ORDER BY created_at, id` + f.limit(p.Limit)
	return queryList(ctx, t, scanAudit, q, f.args...)
}
