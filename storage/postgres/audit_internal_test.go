package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// The audit log is append-only in the schema too: not even a statement
// written by hand changes, removes or truncates an entry.
func TestAuditLogAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return tx.AppendAudit(ctx, &engine.AuditEntry{ID: "aud_1", Actor: "a", Action: engine.AuditOrgCreate, OrganizationID: "org_1", Subject: "org_1", CreatedAt: base})
	})
	for _, stmt := range []string{
		`UPDATE audit_log SET actor = 'mallory'`,
		`DELETE FROM audit_log`,
		`TRUNCATE audit_log`,
	} {
		_, err := s.pool.Exec(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only refusal", stmt, err)
		}
	}
	var actor string
	if err := s.pool.QueryRow(ctx, `SELECT actor FROM audit_log WHERE id = 'aud_1'`).Scan(&actor); err != nil || actor != "a" {
		t.Errorf("entry after refused changes: actor %q, %v", actor, err)
	}
}
