package sqlite

import (
	"context"
	"fmt"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// The audit log: append-only, so there is an insert and a list and nothing
// else (0005's triggers refuse UPDATE and DELETE).

const auditColumns = schema.AuditColumns

// auditDetailsCol scans the details JSON object; {} reads back as nil.
type auditDetailsCol struct{ m *map[string]string }

func (c auditDetailsCol) Scan(v any) error {
	var b []byte
	switch s := v.(type) {
	case string:
		b = []byte(s)
	case []byte:
		b = s
	default:
		return fmt.Errorf("sqlite: audit details: unexpected %T", v)
	}
	m, err := schema.ParseAuditDetails(b)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
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
	_, err = t.tx.ExecContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES (`+placeholders(7)+`)`,
		e.ID, e.Actor, e.Action, e.OrganizationID, e.Subject, details, micros(e.CreatedAt))
	return interpretError(err)
}

func (t *tx) ListAudit(ctx context.Context, p engine.ListAuditParams) ([]*engine.AuditEntry, error) {
	q := `SELECT ` + auditColumns + ` FROM audit_log`
	var args []any
	if p.OrganizationID != "" {
		q += ` WHERE organization_id = ?`
		args = append(args, p.OrganizationID)
	}
	q += ` ORDER BY created_at, id`
	if p.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, p.Limit)
	}
	return queryList(ctx, t, scanAudit, q, args...)
}
