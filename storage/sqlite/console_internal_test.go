package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// recorder is a querier that remembers the last query it ran.
type recorder struct {
	*sql.DB
	query string
	args  []any
}

func (r *recorder) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	r.query, r.args = query, args
	return r.DB.QueryContext(ctx, query, args...)
}

// TestConsoleSearchesUseIndexes: each filter of the console's deposit and
// withdrawal searches is served by an index that also gives the order, so
// a search costs the same whatever the organization's history.
func TestConsoleSearchesUseIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := &recorder{DB: s.writer}
	x := &tx{tx: rec}
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		p     engine.SearchDepositsParams
		index string
	}{
		{"newest", engine.SearchDepositsParams{OrganizationID: "org_1"}, "deposits_organization_created"},
		{"dates", engine.SearchDepositsParams{OrganizationID: "org_1", From: day, To: day.Add(24 * time.Hour)}, "deposits_organization_created"},
		{"phone", engine.SearchDepositsParams{OrganizationID: "org_1", PayerPhone: "01712345678"}, "deposits_organization_phone"},
		{"status", engine.SearchDepositsParams{OrganizationID: "org_1", Status: engine.StatusFailed}, "deposits_organization_status"},
		{"merchant ID", engine.SearchDepositsParams{OrganizationID: "org_1", MerchantID: "m"}, "sqlite_autoindex_deposits"},
		{"transaction ID", engine.SearchDepositsParams{OrganizationID: "org_1", TransactionID: "TX1", Channels: engine.Channels()}, "sqlite_autoindex_attempts"},
	} {
		c.p.Limit = 50
		if _, err := x.SearchDeposits(ctx, c.p); err != nil {
			t.Fatal(err)
		}
		plan := queryPlan(t, s.writer, rec.query, rec.args...)
		first := strings.SplitN(plan, "\n", 2)[0]
		if !strings.Contains(first, c.index) || strings.Contains(plan, "SCAN") || strings.Contains(plan, "TEMP B-TREE FOR ORDER BY") && c.name != "transaction ID" {
			t.Errorf("%s: plan\n%s", c.name, plan)
		}
		if c.name == "transaction ID" && !strings.HasPrefix(first, "SEARCH attempts") {
			t.Errorf("transaction ID: not driven by attempts:\n%s", plan)
		}
	}
	for _, c := range []struct {
		name  string
		p     engine.SearchWithdrawalsParams
		index string
	}{
		{"newest", engine.SearchWithdrawalsParams{OrganizationID: "org_1"}, "withdrawals_organization_created"},
		{"status", engine.SearchWithdrawalsParams{OrganizationID: "org_1", Status: engine.WithdrawalProcessing}, "withdrawals_organization_status"},
	} {
		c.p.Limit = 50
		if _, err := x.SearchWithdrawals(ctx, c.p); err != nil {
			t.Fatal(err)
		}
		if plan := queryPlan(t, s.writer, rec.query, rec.args...); !strings.Contains(plan, c.index) || strings.Contains(plan, "SCAN") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("withdrawals %s: plan\n%s", c.name, plan)
		}
	}
}
