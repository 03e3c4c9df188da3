// Package provider_test holds what concerns every provider and both stores
// at once: the move of the providers' tables from the stores' migrations to
// the providers' own migration lines.
package provider_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	_ "modernc.org/sqlite"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// store is what the test needs of both stores.
type store interface {
	engine.Store
	Migrate(ctx context.Context, lines ...engine.MigrationLine) ([]engine.MigrationVersion, error)
	MigrationVersions(ctx context.Context, lines ...engine.MigrationLine) ([]engine.MigrationVersion, error)
	CheckMigrations(ctx context.Context, lines ...engine.MigrationLine) error
}

// database is a fresh database of one dialect, reached without payd (exec,
// schema) and through a store built on it with New, which migrates
// nothing.
type database struct {
	dialect string
	exec    func(t *testing.T, script string)
	// schema describes every table, column, index, constraint and trigger
	// but the records of migrations, one line each, sorted.
	schema func(t *testing.T) []string
	store  func(t *testing.T) store
}

func databases(t *testing.T) map[string]func(t *testing.T) *database {
	return map[string]func(t *testing.T) *database{
		"sqlite":   sqliteDatabase,
		"postgres": postgresDatabase,
	}
}

func sqliteDatabase(t *testing.T) *database {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "payd.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &database{
		dialect: "sqlite",
		exec: func(t *testing.T, script string) {
			t.Helper()
			if _, err := db.Exec(script); err != nil {
				t.Fatalf("%v\n%s", err, script)
			}
		},
		schema: func(t *testing.T) []string {
			t.Helper()
			rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema
				WHERE tbl_name NOT IN ('payd_migrations', 'schema_migrations')`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var typ, name, table, text string
				if err := rows.Scan(&typ, &name, &table, &text); err != nil {
					t.Fatal(err)
				}
				out = append(out, strings.Join([]string{typ, name, table, text}, " | "))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(out)
			return out
		},
		store: func(t *testing.T) store {
			t.Helper()
			s, err := sqlite.New(db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

func postgresDatabase(t *testing.T) *database {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	postgres.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &database{
		dialect: "postgres",
		exec: func(t *testing.T, script string) {
			t.Helper()
			// No arguments: a simple query, which may hold several statements.
			if _, err := pool.Exec(ctx, script); err != nil {
				t.Fatalf("%v\n%s", err, script)
			}
		},
		schema: func(t *testing.T) []string {
			t.Helper()
			rows, err := pool.Query(ctx, `
				SELECT 'column ' || table_name || '.' || column_name || ' #' || ordinal_position || ' ' || data_type
					|| ' null=' || is_nullable || ' default=' || coalesce(column_default, '') || ' collation=' || coalesce(collation_name, '')
				FROM information_schema.columns WHERE table_schema = current_schema()
					AND table_name NOT IN ('payd_migrations', 'schema_migrations')
				UNION ALL
				SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes
				WHERE schemaname = current_schema() AND tablename NOT IN ('payd_migrations', 'schema_migrations')
				UNION ALL
				SELECT 'constraint ' || c.conrelid::regclass || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
				FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
				WHERE n.nspname = current_schema() AND c.conrelid::regclass::text NOT IN ('payd_migrations', 'schema_migrations')
				UNION ALL
				SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT t.tgisinternal
				UNION ALL
				SELECT 'function ' || p.proname || ' ' || p.prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
				WHERE n.nspname = current_schema()`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				out = append(out, line)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(out)
			return out
		},
		store: func(t *testing.T) store {
			s := postgres.New(pool)
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// legacy builds the database as payd did before migration lines: every
// migration of the one line up to version upTo, today's files as they were
// (testdata/legacy), each recorded in schema_migrations.
func legacy(t *testing.T, d *database, upTo int) {
	t.Helper()
	recordTable := `CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`
	record := `INSERT INTO schema_migrations (version, applied_at) VALUES (%d, 0)`
	if d.dialect == "postgres" {
		recordTable = `CREATE TABLE schema_migrations (version BIGINT NOT NULL PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`
		record = `INSERT INTO schema_migrations (version) VALUES (%d)`
	}
	d.exec(t, recordTable)
	dir := filepath.Join("testdata", "legacy", d.dialect)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var v int
		if _, err := fmt.Sscanf(e.Name(), "%04d_", &v); err != nil || v > upTo {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		d.exec(t, string(b))
		d.exec(t, fmt.Sprintf(record, v))
	}
}

var lines = []engine.MigrationLine{sandbox.Migrations(), smsinbox.Migrations()}

// TestUpgradeToMigrationLines: a database payd made before migration lines
// (today's migrations, the providers' tables among them, recorded in one
// line) migrates to the new layout without loss. Each line adopts the
// versions the old record holds, nothing is run again or skipped: the
// schema is then the one a new database gets, and every row written before
// reads back the same. A database left at an older version gets the rest,
// on both the store's own line and the providers'.
func TestUpgradeToMigrationLines(t *testing.T) {
	for name, open := range databases(t) {
		t.Run(name, func(t *testing.T) {
			if name == "postgres" {
				pgtest.AdminURL(t)
			}
			t.Parallel()
			ctx := context.Background()
			fresh := open(t)
			freshVersions, err := fresh.store(t).Migrate(ctx, lines...)
			if err != nil {
				t.Fatal(err)
			}
			want := fresh.schema(t)

			t.Run("current", func(t *testing.T) {
				t.Parallel()
				d := open(t)
				legacy(t, d, 21)
				// The same tables, columns, indexes and triggers, whichever
				// layout made them (while the engine's line ends at 0021;
				// after Migrate below in any case).
				if got := d.schema(t); freshVersions[0].Latest == 21 && !slices.Equal(got, want) {
					t.Fatalf("the new layout's schema is not today's:\n%s", schemaDiff(want, got))
				}
				s := d.store(t)
				// Not migrated yet: the old record already holds every
				// version it had, the providers' included.
				vs, err := s.MigrationVersions(ctx, lines...)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range vs {
					if len(v.Missing) > 0 && (v.Line != "main" || v.Missing[0] <= 21) {
						t.Errorf("an old database at 0021 lacks %+v", v)
					}
				}
				// The engine's own migrations after 0021 first: today's code
				// writes their columns. The providers' lines, adopted from the
				// old record, are what the rows must survive.
				if _, err := s.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				fill(t, s)
				before := readAll(t, s)
				vs, err = s.Migrate(ctx, lines...)
				if err != nil {
					t.Fatal(err)
				}
				wantCurrent(t, vs)
				if got := d.schema(t); !slices.Equal(got, want) {
					t.Errorf("schema after Migrate:\n%s", schemaDiff(want, got))
				}
				if after := readAll(t, s); !reflect.DeepEqual(after, before) {
					t.Errorf("rows after Migrate:\n%v\nbefore:\n%v", after, before)
				}
				// Again: nothing to do.
				if _, err := s.Migrate(ctx, lines...); err != nil {
					t.Fatal(err)
				}
			})
			// 0008: before the sandbox's 0010 and the inbox's 0013 and 0015,
			// and the store's own 0011 on.
			t.Run("0008", func(t *testing.T) {
				t.Parallel()
				d := open(t)
				legacy(t, d, 8)
				s := d.store(t)
				err := s.CheckMigrations(ctx, lines...)
				for _, want := range []string{`line "main" is at version 8, this code needs `, `(missing 0011, 0012, 0014, 0016, 0018, 0019, 0020, 0021`,
					`line "sandbox" is at version 2, this code needs 3 (missing 0003)`,
					`line "smsinbox" is at version 2, this code needs 4 (missing 0003, 0004)`} {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("CheckMigrations = %v, want it to say %s", err, want)
					}
				}
				vs, err := s.Migrate(ctx, lines...)
				if err != nil {
					t.Fatal(err)
				}
				wantCurrent(t, vs)
				if got := d.schema(t); !slices.Equal(got, want) {
					t.Errorf("schema after Migrate:\n%s", schemaDiff(want, got))
				}
			})
			// A provider added later to an old database adopts its versions
			// then: the sandbox alone first, the inbox on a later start.
			t.Run("ProviderAddedLater", func(t *testing.T) {
				t.Parallel()
				d := open(t)
				legacy(t, d, 21)
				s := d.store(t)
				if _, err := s.Migrate(ctx, sandbox.Migrations()); err != nil {
					t.Fatal(err)
				}
				vs, err := s.Migrate(ctx, lines...)
				if err != nil {
					t.Fatal(err)
				}
				wantCurrent(t, vs)
				if got := d.schema(t); !slices.Equal(got, want) {
					t.Errorf("schema after Migrate:\n%s", schemaDiff(want, got))
				}
			})
		})
	}
}

// TestBehindRefusesToStart: a store whose schema lacks a provider's
// migrations says which line and versions, and a new store migrated with
// the engine's line alone has no provider table.
func TestBehindRefusesToStart(t *testing.T) {
	for name, open := range databases(t) {
		t.Run(name, func(t *testing.T) {
			if name == "postgres" {
				pgtest.AdminURL(t)
			}
			t.Parallel()
			ctx := context.Background()
			d := open(t)
			s := d.store(t)
			if err := s.CheckMigrations(ctx); err == nil || !strings.Contains(err.Error(), `line "main" is at version 0`) {
				t.Errorf("CheckMigrations of an empty database = %v", err)
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for _, l := range d.schema(t) {
				if strings.Contains(l, "sandbox_") || strings.Contains(l, "sms_") || strings.Contains(l, "manual_payouts") {
					t.Errorf("the store's own line made a provider's table: %s", l)
				}
			}
			err := s.CheckMigrations(ctx, smsinbox.Migrations())
			if err == nil || !strings.Contains(err.Error(), `line "smsinbox" is at version 0, this code needs 4 (missing 0001, 0002, 0003, 0004)`) {
				t.Errorf("CheckMigrations = %v", err)
			}
			if _, err := s.Migrate(ctx, smsinbox.Migrations()); err != nil {
				t.Fatal(err)
			}
			if err := s.CheckMigrations(ctx, smsinbox.Migrations()); err != nil {
				t.Error(err)
			}
			vs, err := s.MigrationVersions(ctx, sandbox.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != 2 || vs[1].Line != "sandbox" || vs[1].Version != 0 || !slices.Equal(vs[1].Missing, []int{1, 2, 3}) {
				t.Errorf("MigrationVersions = %+v", vs)
			}
		})
	}
}

// wantCurrent requires every line current, the providers' at their
// latest (the store's own grows with the engine: at least 0021).
func wantCurrent(t *testing.T, vs []engine.MigrationVersion) {
	t.Helper()
	want := map[string]int{"main": 21, "sandbox": 3, "smsinbox": 4}
	if len(vs) != len(want) {
		t.Errorf("versions = %+v", vs)
	}
	for _, v := range vs {
		if v.Version != v.Latest || len(v.Missing) > 0 || v.Latest < want[v.Line] || v.Line != "main" && v.Latest != want[v.Line] {
			t.Errorf("line %s: %+v, want version %d and nothing missing", v.Line, v, want[v.Line])
		}
	}
}

func schemaDiff(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

var base = time.Date(2026, 11, 20, 8, 30, 15, 123456000, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// fill writes rows of the engine's tables and of both providers'.
func fill(t *testing.T, s store) {
	t.Helper()
	ctx := context.Background()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, &engine.Organization{ID: "org_1", Name: "Old shop", DepositsEnabled: true,
			InstructionsWindow: engine.DefaultInstructionsWindow, RedirectWindow: engine.DefaultRedirectWindow,
			CreatedAt: base, UpdatedAt: base}); err != nil {
			return err
		}
		if err := tx.CreateWallet(ctx, &engine.Wallet{ID: "wal_1", OrganizationID: "org_1", Channel: engine.ChannelBkash,
			Operation: engine.OperationCashOut, Phone: "01700000001", Enabled: true, CreatedAt: base}); err != nil {
			return err
		}
		if err := tx.CreateDeposit(ctx, &engine.Deposit{ID: "dep_1", OrganizationID: "org_1", MerchantID: "m_1",
			CheckoutMode: engine.CheckoutRedirect, Amount: dec("500"), PaymentMethod: "bkash",
			RedirectURL: "https://merchant.example/return", Metadata: []byte("{}"), Status: engine.StatusPending,
			Action: engine.ActionRedirect, CheckoutToken: "tok_1", CheckoutURL: "https://pay.example/c/tok_1",
			VerificationState: engine.VerificationProcessing, ExpiresAt: base.Add(time.Hour), CreatedAt: base, UpdatedAt: base}); err != nil {
			return err
		}
		return tx.CreateAttempt(ctx, &engine.Attempt{ID: "att_1", DepositID: "dep_1", OrganizationID: "org_1",
			Channel: engine.ChannelBkash, TransactionID: "TRX1", Status: engine.AttemptProcessing, NextRunAt: base,
			CreatedAt: base, UpdatedAt: base})
	})
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.NewSQLStore(s)
	if err := sb.RecordSandboxPayment(ctx, "org_1", &engine.ProviderTransaction{Channel: engine.ChannelBkash,
		TransactionID: "SBX1", Type: engine.TransactionCashOut, Status: engine.TransactionCompleted, Amount: dec("1234.5"),
		Currency: engine.Currency, PayerPhone: "01711111111", RecipientPhone: "01700000001", CompletedAt: base,
		TimePrecision: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := sb.CreateSandboxPayout(ctx, "org_1", &engine.Payout{IdempotencyKey: "wdr_1:1", Reference: "SBX-PAYOUT-1",
		Method: "bkash", Account: "01711111111", Amount: dec("10.01"), Status: engine.PayoutPending, CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	parsed := &smsparse.Message{Channel: engine.ChannelBkash, Kind: smsparse.KindMoneyReceived, Credit: true,
		Amount: dec("500"), Counterparty: "01711111111", TransactionID: "TRX1",
		Time: base.Truncate(time.Minute), Balance: dec("1500.50")}
	err = smsinbox.NewSQLStore(s).InboxTx(ctx, func(ctx context.Context, tx smsinbox.Tx) error {
		if err := tx.CreateDevice(ctx, &smsinbox.Device{ID: "dev_1", OrganizationID: "org_1", Name: "Phone",
			TokenHash: []byte("token hash of dev_1 .............."), TokenHint: "1", CreatedAt: base}); err != nil {
			return err
		}
		if err := tx.CreateChain(ctx, &smsinbox.Chain{WalletID: "wal_1", OrganizationID: "org_1", DeviceID: "dev_1",
			Channel: engine.ChannelBkash, UpdatedAt: base}); err != nil {
			return err
		}
		if err := tx.CreateSMS(ctx, &smsinbox.SMS{ID: "sms_1", OrganizationID: "org_1", DeviceID: "dev_1", WalletID: "wal_1",
			Sender: "bKash", Body: "You have received Tk 500.00", Fingerprint: []byte("fingerprint of sms_1 ............"),
			ReceivedAt: base, Status: smsinbox.StatusHeld, Parsed: parsed, Channel: engine.ChannelBkash,
			CreatedAt: base, UpdatedAt: base}); err != nil {
			return err
		}
		return tx.CreateManualPayout(ctx, &smsinbox.ManualPayout{OrganizationID: "org_1", Payout: engine.Payout{
			IdempotencyKey: "wdr_2:1", Method: "bkash", Account: "01711111111", Amount: dec("500"),
			Status: smsinbox.PayoutQueued, CreatedAt: base}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readAll reads back every row fill wrote.
func readAll(t *testing.T, s store) []any {
	t.Helper()
	ctx := context.Background()
	var out []any
	add := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		add(tx.GetOrganization(ctx, "org_1"))
		add(tx.GetWallet(ctx, "org_1", "wal_1"))
		add(tx.GetDeposit(ctx, "org_1", "dep_1"))
		add(tx.GetAttempt(ctx, "att_1"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.NewSQLStore(s)
	add(sb.GetSandboxPayment(ctx, "org_1", engine.ChannelBkash, "SBX1"))
	p, org, err := sb.GetSandboxPayout(ctx, "wdr_1:1")
	add([]any{p, org}, err)
	err = smsinbox.NewSQLStore(s).InboxReadTx(ctx, func(ctx context.Context, tx smsinbox.Tx) error {
		add(tx.ListDevices(ctx, "org_1"))
		add(tx.ListChains(ctx, "org_1", "dev_1"))
		add(tx.GetSMSByFingerprint(ctx, "org_1", []byte("fingerprint of sms_1 ............")))
		add(tx.ListHeldSMS(ctx, "wal_1"))
		add(tx.ListSMSCounts(ctx, "org_1"))
		add(tx.GetManualPayout(ctx, "wdr_2:1"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConcurrentMigrate: processes that start at once on one database,
// new or of the old layout, all migrate it (each migration under the
// store's lock, checked again once it holds it), none fails, and the
// schema is the one a single migration makes.
func TestConcurrentMigrate(t *testing.T) {
	for name, open := range databases(t) {
		t.Run(name, func(t *testing.T) {
			if name == "postgres" {
				pgtest.AdminURL(t)
			}
			t.Parallel()
			ctx := context.Background()
			fresh := open(t)
			if _, err := fresh.store(t).Migrate(ctx, lines...); err != nil {
				t.Fatal(err)
			}
			want := fresh.schema(t)
			for _, legacyAt := range []int{0, 11} {
				t.Run(fmt.Sprint("from", legacyAt), func(t *testing.T) {
					d := open(t)
					if legacyAt > 0 {
						legacy(t, d, legacyAt)
					}
					const n = 6
					stores := make([]store, n)
					for i := range stores {
						stores[i] = d.store(t)
					}
					errs := make([]error, n)
					var wg sync.WaitGroup
					for i, s := range stores {
						wg.Go(func() { _, errs[i] = s.Migrate(ctx, lines...) })
					}
					wg.Wait()
					for i, err := range errs {
						if err != nil {
							t.Errorf("process %d: %v", i, err)
						}
					}
					if got := d.schema(t); !slices.Equal(got, want) {
						t.Errorf("schema:\n%s", schemaDiff(want, got))
					}
					vs, err := stores[0].MigrationVersions(ctx, lines...)
					if err != nil {
						t.Fatal(err)
					}
					wantCurrent(t, vs)
				})
			}
		})
	}
}
