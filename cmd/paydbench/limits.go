package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/sqlite"
)

func openStore(ctx context.Context, dsn string) (engine.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return postgres.Open(ctx, dsn)
	}
	return sqlite.Open(ctx, dsn)
}

// benchDeposit is a deposit row as a create writes it.
func benchDeposit(orgID, merchantID string, now time.Time) *engine.Deposit {
	return &engine.Deposit{
		ID: engine.NewID(engine.PrefixDeposit, now), OrganizationID: orgID, MerchantID: merchantID,
		CheckoutMode: engine.CheckoutH2H, Amount: decimal.NewFromInt(1000), PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/r", PayerPhone: "01712345678", Metadata: []byte("{}"),
		Status: engine.StatusPending, Action: engine.ActionDisplayInstructions, CheckoutToken: engine.RandomToken(24),
		Channel: "bkash", Operation: "cash_out", RecipientPhone: "01811000000",
		VerificationState: engine.VerificationAwaitingReference, ExpiresAt: now.Add(15 * time.Minute),
		CreatedAt: now, UpdatedAt: now,
	}
}

// measureStore is the store's raw limit: the statements of a create
// (the idempotency check, the deposit row, an outbox row) in one
// transaction, from n goroutines, with no HTTP, JSON or validation.
func measureStore(ctx context.Context, dsn, orgID string, n int, d time.Duration) (*result, error) {
	store, err := openStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	run := time.Now().UnixNano()
	return drive(ctx, n, d, 0, func(ctx context.Context, worker, i int) error {
		now := time.Now().UTC().Truncate(time.Microsecond)
		mid := fmt.Sprintf("raw-%d-%d-%d", run, worker, i)
		return store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			if _, err := tx.GetDepositByMerchantID(ctx, orgID, mid); err != engine.ErrNotFound {
				return fmt.Errorf("idempotency check: %v", err)
			}
			dep := benchDeposit(orgID, mid, now)
			if err := tx.CreateDeposit(ctx, dep); err != nil {
				return err
			}
			return tx.CreateEvent(ctx, &engine.Event{
				ID: engine.NewID(engine.PrefixEvent, now), OrganizationID: orgID, Type: "bench.raw",
				ResourceID: dep.ID, Payload: []byte(`{"bench":true}`), CreatedAt: now,
			})
		})
	})
}

// seedDeposits inserts n deposits through the store in batches, so create
// and GET can be measured over a large table.
func seedDeposits(ctx context.Context, dsn, orgID string, n int) error {
	store, err := openStore(ctx, dsn)
	if err != nil {
		return err
	}
	defer store.Close()
	const batch = 2000
	for done := 0; done < n; done += batch {
		err := store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			now := time.Now().UTC().Truncate(time.Microsecond)
			for i := done; i < min(n, done+batch); i++ {
				if err := tx.CreateDeposit(ctx, benchDeposit(orgID, fmt.Sprintf("seed-%d-%d", now.UnixNano(), i), now)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// measureBareHTTP is net/http's limit for the same exchange: a handler
// that decodes a deposit-sized JSON request and encodes a deposit-sized
// answer, in a process of its own like payd, over loopback. With sign, its
// clients sign each request as they sign payd's GETs (the handler checks
// nothing), so that the load tool's own work, on the same CPUs, is the
// same on both sides of the ratio.
func measureBareHTTP(ctx context.Context, dir string, n int, d time.Duration, sign bool) (*result, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), serveBareEnv+"="+addr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	url := "http://" + addr + "/bare"
	if err := waitHTTP(url, 10*time.Second); err != nil {
		return nil, err
	}
	// The same client as payd's requests (conn.go), so that the load tool's
	// work per request is the same on both sides of the ratio.
	bearer := "Bearer payd_sk_" + strings.Repeat("x", 43)
	c := &client{host: addr, bearer: bearer, secret: bareSecret, conns: newConnPool(addr, n+4)}
	// Its CPU as payd's: the two sides' CPU per GET compare even where the
	// machine is shared and their throughputs were measured under other load.
	meter := cpuMeter{paydPID: cmd.Process.Pid, requests: c.handled}
	meter.start()
	res, err := drive(ctx, n, d, 0, func(ctx context.Context, _, _ int) error {
		return c.call(ctx, "GET", "/bare", nil, sign, http.StatusOK, nil)
	})
	if res != nil {
		res.cpu = meter.stop()
	}
	return res, err
}

var bareSecret = []byte("payd_ss_" + strings.Repeat("x", 43))

// serveBareEnv, set, makes this program (or its test binary) serve the
// bare handler on the address it holds instead of running a benchmark.
const serveBareEnv = "PAYDBENCH_SERVE_BARE"

// bareDeposit is the answer of the bare handler: an H2H deposit's shape.
var bareDeposit = json.RawMessage(`{"id":"dep_01m7zwmx57akfa85cw0h2p03xg","amount":"750.50","payment_method":"bkash_agent","status":"pending","metadata":{},"merchant_id":"order-1002","checkout_mode":"h2h","expires_at":"2026-11-21T20:42:00Z","next_action":{"type":"display_instructions","channel":"bkash","operation":"cash_out","recipient":{"type":"phone","value":"01711000001","name":"Agent Rahim"},"qr_payload":null,"amount":"750.50","currency":"BDT","verification":{"endpoint":"/api/v1/deposits/dep_01m7zwmx57akfa85cw0h2p03xg/verify","required_fields":["provider_transaction_id"]}},"verification":{"state":"awaiting_reference","attempts_used":0,"attempts_remaining":3,"failure_code":null},"provider_transaction_id":null}`)

// serveBare runs the bare handler: it decodes the deposit it will answer
// (as a GET handler decodes its row) and encodes it back.
func serveBare(addr string) {
	http.HandleFunc("/bare", func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := json.Unmarshal(bareDeposit, &v); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	})
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
