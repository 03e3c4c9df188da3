package transport_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// eachStore runs fn on a harness over SQLite and, with
// PAYD_TEST_POSTGRES_URL, over Postgres.
func eachStore(t *testing.T, fn func(t *testing.T, h *harness)) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t)
			if kind == "postgres" {
				store, err := postgres.Open(context.Background(), pgtest.URL(t), sandbox.Migrations())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				h.Config.Store = store
				h.Rebuild()
			}
			fn(t, h)
		})
	}
}

// TestListsSignedAsTheSingleRead: a bearer key without the signing secret
// learns no H2H deposit from a list. GET /v1/balance/transactions names
// each credited deposit and its amount, so an organization that takes H2H
// signs it as it signs GET /v1/deposits, /v1/events and GET
// /v1/deposits/{id}; a missing or bad signature gets, word for word, the
// answer of the single read. After the organization stops taking H2H, a
// page that still shows an H2H deposit is signed. Withdrawals stay bearer,
// as GET /v1/withdraws/{id} is. On both stores.
func TestListsSignedAsTheSingleRead(t *testing.T) {
	eachStore(t, func(t *testing.T, h *harness) {
		org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
		h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
		created := h.CreateH2H(org, h2h(kv{"merchant_id", `"listed"`}))
		if created.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", created.Status, created.Body)
		}
		dep := str(created.JSON, "id")
		if res := h.SandboxPay(org, `{"channel":"bkash","transaction_id":"LIST1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`); res.Status != http.StatusCreated {
			t.Fatalf("payment: %d %s", res.Status, res.Body)
		}
		h.Verify(org, dep, `{"provider_transaction_id":"LIST1"}`)
		h.Work()
		if res := h.GetDeposit(org, dep, true); str(res.JSON, "status") != engine.StatusSucceeded {
			t.Fatalf("deposit: %s", res.Body)
		}
		if res := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"amount", `"100"`})}); res.Status != http.StatusCreated {
			t.Fatalf("withdrawal: %d %s", res.Status, res.Body)
		}
		get := func(path string, sign bool, secret string) *response {
			return h.Do(org, request{Method: http.MethodGet, Path: "/api" + path, APIKey: org.APIKey, Sign: sign, Secret: secret})
		}
		// The single read's refusals, the answers every list gives.
		unsigned, wrong := get("/v1/deposits/"+dep, false, ""), get("/v1/deposits/"+dep, true, "payd_ss_wrong")
		if unsigned.Status != http.StatusUnauthorized || wrong.Status != http.StatusUnauthorized {
			t.Fatalf("single read: %d %s / %d %s", unsigned.Status, unsigned.Body, wrong.Status, wrong.Body)
		}
		events := h.mustList(org, "/v1/events", true)
		if len(events.Data) == 0 {
			t.Fatal("no events")
		}
		signed := func(paths ...string) {
			t.Helper()
			for _, path := range paths {
				if res := get(path, false, ""); res.Status != unsigned.Status || string(res.Body) != string(unsigned.Body) {
					t.Errorf("%s unsigned: %d %s, want %s", path, res.Status, res.Body, unsigned.Body)
				}
				if res := get(path, true, "payd_ss_wrong"); res.Status != wrong.Status || string(res.Body) != string(wrong.Body) {
					t.Errorf("%s wrongly signed: %d %s, want %s", path, res.Status, res.Body, wrong.Body)
				}
				if res := get(path, true, ""); res.Status != http.StatusOK {
					t.Errorf("%s signed: %d %s", path, res.Status, res.Body)
				} else if strings.HasPrefix(path, "/v1/balance/transactions") && !strings.Contains(path, "held") && !strings.Contains(string(res.Body), dep) {
					t.Errorf("%s signed does not show the deposit's credit: %s", path, res.Body)
				}
			}
		}
		bearer := func(paths ...string) {
			t.Helper()
			for _, path := range paths {
				if res := get(path, false, ""); res.Status != http.StatusOK {
					t.Errorf("%s unsigned: %d %s", path, res.Status, res.Body)
				}
			}
		}
		signed("/v1/balance/transactions", "/v1/balance/transactions?account=available&limit=100",
			"/v1/balance/transactions?account=held", "/v1/deposits", "/v1/events", "/v1/events/"+itemID(t, events.Data[0]))
		bearer("/v1/withdraws", "/v1/withdraws/"+itemID(t, h.mustList(org, "/v1/withdraws", false).Data[0]), "/v1/balance")

		// The organization stops taking H2H: its history still shows the
		// deposit, so the pages that show it stay signed.
		if _, err := h.Engine.UpdateOrganization(t.Context(), org.ID, engine.OrganizationSettings{H2HEnabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		signed("/v1/balance/transactions", "/v1/balance/transactions?account=available", "/v1/deposits")
		// A page without an H2H deposit is bearer, as a redirect deposit's
		// GET is: the held account moved only for the withdrawal.
		bearer("/v1/balance/transactions?account=held", "/v1/withdraws")
	})
}
