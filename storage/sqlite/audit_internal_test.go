package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// The audit log is append-only in the schema too: not even a statement
// written by hand changes or removes an entry.
func TestAuditLogAppendOnly(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.AppendAudit(ctx, &engine.AuditEntry{ID: "aud_1", Actor: "a", Action: engine.AuditOrgCreate, OrganizationID: "org_1", Subject: "org_1"})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE audit_log SET actor = 'mallory'`,
		`DELETE FROM audit_log`,
	} {
		_, err := s.writer.ExecContext(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only refusal", stmt, err)
		}
	}
	var actor string
	if err := s.reader.QueryRowContext(ctx, `SELECT actor FROM audit_log WHERE id = 'aud_1'`).Scan(&actor); err != nil || actor != "a" {
		t.Errorf("entry after refused changes: actor %q, %v", actor, err)
	}
}

// Releasing leases at shutdown walks the partial due indexes, not tables.
func TestReleaseLeasesUsesDueIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, index := range []string{"attempts_due", "withdrawals_due", "refunds_due", "deliveries_due"} {
		if plan := queryPlan(t, s.writer, releaseLeasesQueries[i], "w"); !strings.Contains(plan, index) {
			t.Errorf("release plan does not use %s:\n%s", index, plan)
		}
	}
}
