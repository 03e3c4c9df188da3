package transport_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// BenchmarkRefundCreate is a signed POST /v1/deposits/{id}/refunds of
// 0.01 over HTTP, one after another, on a deposit with many refunds
// already: the reservation is read from the deposit's row, so the cost
// does not grow with them. On SQLite and, with PAYD_TEST_POSTGRES_URL,
// Postgres.
func BenchmarkRefundCreate(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			s := paydtest.MustOpen(b)
			if kind == "postgres" {
				store, err := postgres.Open(context.Background(), pgtest.URL(b))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { store.Close() })
				s.Config.Store = store
				s.Rebuild()
			}
			org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
			s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
			created := s.CreateH2H(org, h2h(kv{"amount", `"25000"`}))
			dep := str(created.JSON, "id")
			s.SandboxPay(org, `{"channel":"bkash","transaction_id":"BENCH1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"25000","status":"completed"}`)
			s.Verify(org, dep, `{"provider_transaction_id":"BENCH1"}`)
			s.Work()
			i := 0
			for b.Loop() {
				i++
				res := s.Do(org, request{Path: "/api/v1/deposits/" + dep + "/refunds", APIKey: org.APIKey, Sign: true,
					Body: fmt.Sprintf(`{"merchant_id":"b-%d","amount":"0.01"}`, i)})
				if res.Status != http.StatusCreated {
					b.Fatalf("refund %d: %d %s", i, res.Status, res.Body)
				}
			}
		})
	}
}
