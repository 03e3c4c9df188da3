package sandbox_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestReadsRowsTheStoresWrote: an existing database keeps working. The
// fixture is a SQLite database at migration 0011 whose sandbox rows were
// written by storage/sqlite, before the sandbox kept its own SQL (commit
// 616e9b3; see provider/smsinbox's test of the same name).
func TestReadsRowsTheStoresWrote(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "sqlite-0011-stored-by-storage.db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "payd.db")
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := sqlite.Open(ctx, path, sandbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s := sandbox.NewSQLStore(store)
	at := time.Date(2026, 11, 20, 8, 30, 15, 123456000, time.UTC)

	p, err := s.GetSandboxPayment(ctx, "org_old", "bkash", "SBX1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != engine.TransactionCashOut || p.Status != engine.TransactionCompleted ||
		!p.Amount.Equal(decimal.RequireFromString("1234.5")) || p.Currency != engine.Currency ||
		p.PayerPhone != "01711111111" || p.RecipientPhone != "01800000000" ||
		!p.CompletedAt.Equal(at) || p.TimePrecision != time.Minute {
		t.Errorf("payment = %+v", p)
	}
	po, org, err := s.GetSandboxPayout(ctx, "wdr_9:1")
	if err != nil {
		t.Fatal(err)
	}
	if org != "org_old" || po.Reference != "SBX-PAYOUT-9" || po.Method != "bkash" || po.Account != "01711111111" ||
		!po.Amount.Equal(decimal.RequireFromString("10.01")) || po.Status != engine.PayoutPending ||
		!po.CreatedAt.Equal(at) || !po.CompletedAt.IsZero() {
		t.Errorf("payout = %+v, %s", po, org)
	}
	// The old rows still hold their keys.
	if err := s.CreateSandboxPayout(ctx, "org_old", po); !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("CreateSandboxPayout of an old key = %v, want engine.ErrDuplicate", err)
	}
}
