package bkash_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/bkash/bkashsim"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestTokenGrantedOnce: many requests on two payd instances over one
// database grant one token, refresh it once when it is due, and a token
// bKash refuses early is renewed and the call made again.
func TestTokenGrantedOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		store := open()
		a, b := w.instance(store), w.instance(open())
		org := a.org()
		create := func(n int) {
			var wg sync.WaitGroup
			for i := range n {
				in := a
				if i%2 == 1 {
					in = b
				}
				wg.Go(func() {
					_, _, err := in.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{OrganizationID: org.Organization.ID,
						Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "T-" + engine.RandomToken(6)})
					if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
		}
		create(24)
		if g, r := w.sim.Calls("grant"), w.sim.Calls("refresh"); g != 1 || r != 0 {
			t.Fatalf("%d grants, %d refreshes for 24 requests on two instances, want 1 and 0", g, r)
		}
		w.clock.Add(50 * time.Minute) // still fresh
		create(8)
		w.clock.Add(6 * time.Minute) // due: 4 minutes before expiry
		create(16)
		if g, r := w.sim.Calls("grant"), w.sim.Calls("refresh"); g != 1 || r != 1 {
			t.Fatalf("%d grants, %d refreshes after the token was due, want 1 and 1", g, r)
		}
		// Expired at bKash by surprise (its 401): renewed once, the call
		// made again and answered.
		w.sim.RevokeTokens()
		create(1)
		if g, r := w.sim.Calls("grant"), w.sim.Calls("refresh"); g+r != 3 {
			t.Fatalf("%d grants, %d refreshes after a refused token", g, r)
		}
	})
}

// TestGrantOutageIsNoFlood: with bKash's grant failing, many requests at
// once make one grant call, each is 503 method_unavailable, and the next
// grant waits for the backoff.
func TestGrantOutageIsNoFlood(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		store := open()
		a, b := w.instance(store), w.instance(open())
		org := a.org()
		w.sim.Fault("grant", bkashsim.Fault{HTTPStatus: http.StatusServiceUnavailable, Times: 2})
		create := func(n int) (failed int) {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range n {
				in := a
				if i%2 == 1 {
					in = b
				}
				wg.Go(func() {
					_, _, err := in.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{OrganizationID: org.Organization.ID,
						Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "O-" + engine.RandomToken(6)})
					var e *engine.Error
					if errors.As(err, &e) && e.Code == engine.CodeMethodUnavailable {
						mu.Lock()
						failed++
						mu.Unlock()
					} else if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			return failed
		}
		if f := create(10); f != 10 || w.sim.Calls("grant") != 1 {
			t.Fatalf("%d of 10 refused, %d grants, want 10 and 1", f, w.sim.Calls("grant"))
		}
		w.clock.Add(6 * time.Second)
		if f := create(4); f != 4 || w.sim.Calls("grant") != 2 {
			t.Fatalf("after the backoff: %d of 4 refused, %d grants, want 4 and 2", f, w.sim.Calls("grant"))
		}
		w.clock.Add(6 * time.Second)
		if f := create(4); f != 0 || w.sim.Calls("grant") != 3 {
			t.Fatalf("bKash back: %d of 4 refused, %d grants, want 0 and 3", f, w.sim.Calls("grant"))
		}
	})
}

// TestCredentialsNeverShown: secrets and tokens are in no log line, in no
// error, and not in the database's text.
func TestCredentialsNeverShown(t *testing.T) {
	w := newWorld(t)
	path := filepath.Join(t.TempDir(), "payd.db")
	store, serr := sqlite.Open(context.Background(), path, sandbox.Migrations(), bkash.Migrations())
	if serr != nil {
		t.Fatal(serr)
	}
	in := w.instance(store)
	org := in.org()
	d, pid := in.redirect(org.Organization.ID, "500")
	cb, _ := w.sim.Approve(pid, "01712345678")
	w.sim.Fault("execute", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusBadGateway})
	in.visit(cb)
	w.sim.Fault("create", bkashsim.Fault{Code: "2001"})
	_, _, err := in.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{OrganizationID: org.Organization.ID,
		Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "X1"})
	in.work()
	_ = d
	store.Close()
	db, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	wal, _ := os.ReadFile(path + "-wal")
	for _, secret := range []string{app1.AppSecret, app1.Password, "idtok-", "reftok-"} {
		if strings.Contains(w.logs.String(), secret) {
			t.Errorf("the logs show %q", secret)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("an error shows %q", secret)
		}
		if strings.Contains(string(db), secret) || strings.Contains(string(wal), secret) {
			t.Errorf("the database's text shows %q", secret)
		}
	}
	if !strings.Contains(w.logs.String(), "bkash") {
		t.Fatal("nothing was logged: the test proves nothing")
	}
}
