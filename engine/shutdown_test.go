package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydmock"
)

// blockingProvider holds every lookup and payout send until the caller's
// context ends, telling the test when a call started: the state a worker
// is in, holding its lease, when its process is asked to stop.
func blockingProvider(fake *fakeProvider, started chan string) *paydmock.Provider {
	p := fake.Provider
	p.LookupTransactionFunc = func(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
		started <- req.TransactionID
		<-ctx.Done()
		return nil, ctx.Err()
	}
	p.SendPayoutFunc = func(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
		started <- req.IdempotencyKey
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &p
}

// blockingWebhooks holds every post until the caller's context ends.
type blockingWebhooks struct{ started chan string }

func (w blockingWebhooks) Deliver(ctx context.Context, req engine.WebhookRequest) engine.WebhookResult {
	w.started <- req.MessageID
	<-ctx.Done()
	return engine.WebhookResult{Err: ctx.Err()}
}

// When Run returns it hands back the leases it holds, so another engine
// takes the work at once, long before the lease would have run out.
func TestRunHandsBackLeasesOnShutdown(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		for _, kind := range []string{"attempt", "payout", "delivery"} {
			t.Run(kind, func(t *testing.T) {
				f := newFixture(t)
				started := make(chan string, 16)
				cfg := engine.Config{
					Store: f.store, Provider: blockingProvider(f.provider, started), Clock: f.clock, Keyring: f.keyring,
					LeaseDuration: time.Hour, Webhooks: blockingWebhooks{started},
				}
				var claim func(e *engine.Engine) int
				var leaseOf func() string
				switch kind {
				case "attempt":
					d := f.deposit(f.org.ID, "bkash_agent", "500")
					a := f.mustSubmit(d, "SHUTDOWN1").Attempt
					claim = func(e *engine.Engine) int { n, _ := e.ProcessAttempts(f.ctx); return n }
					leaseOf = func() string {
						got, err := f.eng.GetAttempt(f.ctx, f.org.ID, a.ID)
						if err != nil {
							t.Fatal(err)
						}
						return got.LeaseOwner
					}
				case "payout":
					org := f.withdrawalOrg("1000")
					w, err := f.withdraw(org, "bkash", "01712345678", "100", "shutdown-1")
					if err != nil {
						t.Fatal(err)
					}
					claim = func(e *engine.Engine) int { n, _ := e.ProcessPayouts(f.ctx); return n }
					leaseOf = func() string {
						got, err := f.eng.GetWithdrawal(f.ctx, org, w.ID)
						if err != nil {
							t.Fatal(err)
						}
						return got.LeaseOwner
					}
				case "delivery":
					org := f.withdrawalOrg("1000")
					if _, _, err := f.eng.AddWebhookEndpoint(f.ctx, org, "https://hooks.example/payd"); err != nil {
						t.Fatal(err)
					}
					w, err := f.withdraw(org, "bkash", "01712345678", "100", "shutdown-1")
					if err != nil {
						t.Fatal(err)
					}
					// The payout is not what this case holds: send it now.
					f.payouts()
					evs, err := f.eng.ListEventDeliveries(f.ctx, org, 0)
					if err != nil || len(evs) != 1 || len(evs[0].Deliveries) != 1 || evs[0].Event.ResourceID != w.ID {
						t.Fatalf("deliveries: %v %+v", err, evs)
					}
					id := evs[0].Deliveries[0].ID
					claim = func(e *engine.Engine) int {
						n, _ := e.DeliverWebhooks(f.ctx)
						return n
					}
					leaseOf = func() string {
						var owner string
						err := f.store.ReadTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
							d, err := tx.GetDelivery(ctx, id)
							if err == nil {
								owner = d.LeaseOwner
							}
							return err
						})
						if err != nil {
							t.Fatal(err)
						}
						return owner
					}
					cfg.Provider = f.provider // payouts and lookups do not block here
				}

				a, err := engine.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(f.ctx)
				ran := make(chan error, 1)
				go func() { ran <- a.Run(ctx) }()
				select {
				case <-started: // a holds the lease, mid-call
				case <-time.After(10 * time.Second):
					t.Fatal("the worker never started the call")
				}
				if leaseOf() == "" {
					t.Fatal("no lease while the call runs")
				}
				// Another engine finds nothing to do while a holds the work.
				b, err := engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, Webhooks: okWebhooks{}})
				if err != nil {
					t.Fatal(err)
				}
				if n := claim(b); n != 0 {
					t.Fatalf("b claimed %d while a held the lease", n)
				}
				cancel()
				select {
				case err := <-ran:
					if err != nil {
						t.Fatalf("Run: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Run did not return after its context ended")
				}
				if owner := leaseOf(); owner != "" {
					t.Fatalf("still leased to %s after Run returned", owner)
				}
				// The clock has not moved: without the hand-back the lease
				// would keep b off the work for an hour.
				if n := claim(b); n != 1 {
					t.Fatalf("b claimed %d after a stopped, want 1 at once", n)
				}
			})
		}
	})
}

// okWebhooks answers every post 200.
type okWebhooks struct{}

func (okWebhooks) Deliver(context.Context, engine.WebhookRequest) engine.WebhookResult {
	return engine.WebhookResult{StatusCode: 200}
}
