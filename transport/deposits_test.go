package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

func TestIdempotency(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")

	first := h.CreateH2H(org, h2h(kv{"merchant_id", `"order-1"`}, kv{"metadata", `{"a":1,"b":"x"}`}))
	if first.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", first.Status, first.Body)
	}
	id := str(first.JSON, "id")
	redirectFirst := h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"order-r"`})})
	if redirectFirst.Status != http.StatusOK {
		t.Fatalf("redirect create: %d %s", redirectFirst.Status, redirectFirst.Body)
	}

	tests := []struct {
		name       string
		body       string
		sign       bool
		wantStatus int
		wantCode   string
		wantID     string
	}{
		{"identical h2h replay", h2h(kv{"merchant_id", `"order-1"`}, kv{"metadata", `{"a":1,"b":"x"}`}), true, 200, "", id},
		{"amount equal as a decimal", h2h(kv{"merchant_id", `"order-1"`}, kv{"amount", `"500.00"`}, kv{"metadata", `{"a":1,"b":"x"}`}), true, 200, "", id},
		{"phone equal after normalization", h2h(kv{"merchant_id", `"order-1"`}, kv{"payer", `{"phone":"+8801712345678"}`}, kv{"metadata", `{"a":1,"b":"x"}`}), true, 200, "", id},
		{"metadata equal in another key order", h2h(kv{"merchant_id", `"order-1"`}, kv{"metadata", `{"b":"x","a":1}`}), true, 200, "", id},
		{"different amount", h2h(kv{"merchant_id", `"order-1"`}, kv{"amount", `"501"`}, kv{"metadata", `{"a":1,"b":"x"}`}), true, 409, "merchant_id_conflict", ""},
		{"different payment_method", h2h(kv{"merchant_id", `"order-1"`}, kv{"payment_method", `"bkash_merchant"`}, kv{"metadata", `{"a":1,"b":"x"}`}), true, 409, "merchant_id_conflict", ""},
		{"different redirect_url", h2h(kv{"merchant_id", `"order-1"`}, kv{"redirect_url", `"https://shop.example/other"`}, kv{"metadata", `{"a":1,"b":"x"}`}), true, 409, "merchant_id_conflict", ""},
		{"different payer", h2h(kv{"merchant_id", `"order-1"`}, kv{"payer", `{"phone":"01912345678"}`}, kv{"metadata", `{"a":1,"b":"x"}`}), true, 409, "merchant_id_conflict", ""},
		{"different metadata", h2h(kv{"merchant_id", `"order-1"`}, kv{"metadata", `{"a":1.0,"b":"x"}`}), true, 409, "merchant_id_conflict", ""},
		{"metadata dropped", h2h(kv{"merchant_id", `"order-1"`}), true, 409, "merchant_id_conflict", ""},
		{"different checkout_mode", redirect(kv{"merchant_id", `"order-1"`}, kv{"metadata", `{"a":1,"b":"x"}`}), false, 409, "merchant_id_conflict", ""},
		{"identical redirect replay", redirect(kv{"merchant_id", `"order-r"`}), false, 200, "", str(redirectFirst.JSON, "id")},
		{"redirect with different amount", redirect(kv{"merchant_id", `"order-r"`}, kv{"amount", `"600"`}), false, 409, "merchant_id_conflict", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := h.Do(org, request{APIKey: org.APIKey, Sign: tt.sign, Body: tt.body})
			if res.Status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", res.Status, tt.wantStatus, res.Body)
			}
			if tt.wantCode != "" {
				if res.ErrorCode() != tt.wantCode || !strings.HasPrefix(res.ErrorMessage(), "merchant_id:") {
					t.Fatalf("error %s", res.Body)
				}
				return
			}
			if got := str(res.JSON, "id"); got != tt.wantID {
				t.Fatalf("replay returned %s, want %s", got, tt.wantID)
			}
		})
	}
	// The same merchant_id in another organization is another deposit.
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	res := h.Do(other, request{APIKey: other.APIKey, Body: redirect(kv{"merchant_id", `"order-r"`})})
	if res.Status != 200 || str(res.JSON, "id") == str(redirectFirst.JSON, "id") {
		t.Fatalf("other organization: %d %s", res.Status, res.Body)
	}
}

func TestH2HDisplayInstructions(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent One")
	h.AddWallet(org, "bkash", "cash_out", "8801822222222", "")
	h.AddWallet(org, "nagad", "make_payment", "01933333333", "Nagad Shop")
	meta := `{"order":{"sku":"A-1","qty":2},"price":10.50,"big":12345678901234567890,"html":"<b>&</b>","u":"\u00e9"}`

	res := h.CreateH2H(org, h2h(kv{"merchant_id", `"o1"`}, kv{"metadata", meta}, kv{"payer", `{"phone":"+8801712345678"}`}))
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id := str(res.JSON, "id")
	if !strings.HasPrefix(id, "dep_") {
		t.Errorf("id %q lacks dep_", id)
	}
	if !strings.Contains(string(res.Body), `"metadata":`+meta) {
		t.Errorf("metadata not echoed byte for byte: %s", res.Body)
	}
	want := fmt.Sprintf(`{"type":"display_instructions","channel":"bkash","operation":"cash_out",`+
		`"recipient":{"type":"phone","value":"01811111111","name":"Agent One"},"qr_payload":null,`+
		`"amount":"500.00","currency":"BDT",`+
		`"verification":{"endpoint":"/api/v1/deposits/%s/verify","required_fields":["provider_transaction_id"]}}`, id)
	assertJSONField(t, res.Body, "next_action", want)
	assertJSONField(t, res.Body, "verification", `{"state":"awaiting_reference","attempts_used":0,"attempts_remaining":3,"failure_code":null}`)
	assertJSONField(t, res.Body, "amount", `"500.00"`)
	assertJSONField(t, res.Body, "status", `"pending"`)
	assertJSONField(t, res.Body, "checkout_mode", `"h2h"`)
	assertJSONField(t, res.Body, "provider_transaction_id", `null`)
	assertJSONField(t, res.Body, "expires_at", `"2026-11-21T10:15:00Z"`)
	assertKeys(t, res.Body, "id", "amount", "payment_method", "status", "metadata", "merchant_id", "checkout_mode", "expires_at", "next_action", "verification", "provider_transaction_id", "refunded_amount")

	// The recipient rotates to the least recently used wallet, and a null
	// name stays null.
	res2 := h.CreateH2H(org, h2h(kv{"merchant_id", `"o2"`}))
	assertJSONField(t, res2.Body, "next_action.recipient", `{"type":"phone","value":"01822222222","name":null}`)
	res3 := h.CreateH2H(org, h2h(kv{"merchant_id", `"o3"`}))
	assertJSONField(t, res3.Body, "next_action.recipient.value", `"01811111111"`)

	nagad := h.CreateH2H(org, h2h(kv{"merchant_id", `"o4"`}, kv{"payment_method", `"nagad_merchant"`}))
	assertJSONField(t, nagad.Body, "next_action.channel", `"nagad"`)
	assertJSONField(t, nagad.Body, "next_action.operation", `"make_payment"`)

	// GET of an H2H deposit needs the signature, and shows the same thing.
	if res := h.GetDeposit(org, id, false); res.Status != 401 || res.ErrorMessage() != "missing_signature" {
		t.Fatalf("unsigned GET: %d %s", res.Status, res.Body)
	}
	got := h.GetDeposit(org, id, true)
	if got.Status != 200 || string(got.Body) != string(res.Body) {
		t.Fatalf("GET differs from create:\n%s\n%s", got.Body, res.Body)
	}
	// The recipient is fixed at creation: disabling the wallet changes nothing.
	wallets, _ := h.Engine.ListWallets(context.Background(), org.ID)
	for _, w := range wallets {
		h.Engine.SetWalletEnabled(context.Background(), org.ID, w.ID, false)
	}
	if again := h.GetDeposit(org, id, true); string(again.Body) != string(res.Body) {
		t.Fatalf("deposit changed after its wallet was disabled: %s", again.Body)
	}
	if res := h.CreateH2H(org, h2h(kv{"merchant_id", `"o5"`})); res.Status != 503 || res.ErrorCode() != "method_unavailable" {
		t.Fatalf("all wallets disabled: %d %s", res.Status, res.Body)
	}

	// Past expires_at there is nothing to act on.
	h.Clock.Add(15 * time.Minute)
	expired := h.GetDeposit(org, id, true)
	assertJSONField(t, expired.Body, "next_action", `null`)
}

func TestWalletLimits(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	ctx := context.Background()
	small, err := h.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org.ID, Channel: "bkash", Operation: "cash_out", Phone: "01811111111", MaxAmount: "1000"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org.ID, Channel: "bkash", Operation: "cash_out", Phone: "01822222222", MinAmount: "2000", DailyLimit: "5000"}); err != nil {
		t.Fatal(err)
	}
	recipient := func(mid, amount string) (int, string) {
		res := h.CreateH2H(org, h2h(kv{"merchant_id", `"` + mid + `"`}, kv{"amount", `"` + amount + `"`}))
		var v struct {
			NextAction struct{ Recipient struct{ Value string } } `json:"next_action"`
		}
		json.Unmarshal(res.Body, &v)
		return res.Status, v.NextAction.Recipient.Value
	}
	if _, r := recipient("a", "500"); r != small.Phone {
		t.Errorf("500 went to %s, want the wallet capped at 1000", r)
	}
	if _, r := recipient("b", "3000"); r != "01822222222" {
		t.Errorf("3000 went to %s", r)
	}
	if _, r := recipient("c", "2000"); r != "01822222222" {
		t.Errorf("2000 went to %s", r)
	}
	// 3000 + 2000 used the day's 5000: nothing can take 2500 today.
	if status, _ := recipient("d", "2500"); status != 503 {
		t.Errorf("over the daily limit: status %d, want 503", status)
	}
	// The next Dhaka day (UTC+6 midnight is 18:00 UTC) frees the limit.
	h.Clock.Set(time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC))
	if _, r := recipient("e", "2500"); r != "01822222222" {
		t.Errorf("next day 2500 went to %q", r)
	}
}

func TestRedirectDeposits(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), RedirectWindow: ptr(10 * time.Minute)})
	res := h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"r1"`}, kv{"metadata", `{"x":[1,2.50]}`})})
	if res.Status != 200 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	assertKeys(t, res.Body, "id", "amount", "payment_method", "status", "metadata", "merchant_id", "redirect_url", "refunded_amount")
	checkout := str(res.JSON, "redirect_url")
	if !strings.HasPrefix(checkout, h.URL+"/checkout/") || len(checkout) < len(h.URL)+40 {
		t.Fatalf("redirect_url %q is not an unguessable hosted checkout URL", checkout)
	}
	id := str(res.JSON, "id")
	// A redirect deposit is read with the bearer key alone.
	got := h.GetDeposit(org, id, false)
	if got.Status != 200 {
		t.Fatalf("GET: %d %s", got.Status, got.Body)
	}
	assertKeys(t, got.Body, "id", "amount", "payment_method", "status", "metadata", "merchant_id", "redirect_url", "refunded_amount", "bank_transaction_id")
	assertJSONField(t, got.Body, "bank_transaction_id", `null`)
	assertJSONField(t, got.Body, "metadata", `{"x":[1,2.50]}`)

	page, err := http.Get(checkout)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("checkout page: %d %s", page.StatusCode, page.Header.Get("Content-Type"))
	}
	if res, _ := http.Get(h.URL + "/checkout/not-a-token"); res.StatusCode != 404 {
		t.Fatalf("unknown checkout token: %d", res.StatusCode)
	}

	// An H2H bkash deposit is a redirect action with the redirect window.
	h2hRes := h.CreateH2H(org, h2h(kv{"merchant_id", `"r2"`}, kv{"payment_method", `"bkash"`}))
	if h2hRes.Status != 201 {
		t.Fatalf("h2h bkash: %d %s", h2hRes.Status, h2hRes.Body)
	}
	assertJSONField(t, h2hRes.Body, "next_action.type", `"redirect"`)
	if u := str(h2hRes.JSON, "next_action", "url"); !strings.HasPrefix(u, h.URL+"/checkout/") {
		t.Fatalf("next_action.url %q", u)
	}
	assertJSONField(t, h2hRes.Body, "verification", `{"state":"processing","attempts_used":0,"attempts_remaining":0,"failure_code":null}`)
	assertJSONField(t, h2hRes.Body, "expires_at", `"2026-11-21T10:10:00Z"`)

	h.Clock.Add(10 * time.Minute)
	assertJSONField(t, h.GetDeposit(org, id, false).Body, "redirect_url", `null`)
}

func TestSigningSecretRotation(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	old := org.Secret
	fresh, err := h.Engine.RotateSigningSecret(context.Background(), org.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	create := func(mid, secret string) *response {
		return h.Do(org, request{APIKey: org.APIKey, Sign: true, Secret: secret, Body: h2h(kv{"merchant_id", `"` + mid + `"`})})
	}
	if res := create("a", fresh); res.Status != 201 {
		t.Fatalf("new secret: %d %s", res.Status, res.Body)
	}
	h.Clock.Add(24*time.Hour - time.Second)
	if res := create("b", old); res.Status != 201 {
		t.Fatalf("previous secret within 24h: %d %s", res.Status, res.Body)
	}
	h.Clock.Add(time.Second)
	if res := create("c", old); res.Status != 401 || res.ErrorMessage() != "invalid_signature" {
		t.Fatalf("previous secret after 24h: %d %s", res.Status, res.Body)
	}
	if res := create("d", fresh); res.Status != 201 {
		t.Fatalf("new secret after 24h: %d %s", res.Status, res.Body)
	}
}

func TestAPIKeyRotation(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	creds, err := h.Engine.RotateAPIKey(context.Background(), org.KeyID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) int {
		return h.Do(org, request{Method: "GET", Path: "/api/v1/deposits/dep_x", APIKey: key}).Status
	}
	if get(org.APIKey) != 404 || get(creds.APIKey) != 404 {
		t.Fatal("both keys should authenticate during the grace period")
	}
	h.Clock.Add(time.Hour)
	if get(org.APIKey) != 401 || get(creds.APIKey) != 404 {
		t.Fatal("the old key should stop after the grace period")
	}
}

// TestConcurrentCreates fires 50 identical creates and 50 creates that share
// a merchant_id but not the amount, all at once, over real HTTP and SQLite.
func TestConcurrentCreates(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")

	run := func(bodies []string) []*response {
		out := make([]*response, len(bodies))
		var wg sync.WaitGroup
		startGun := make(chan struct{})
		for i, b := range bodies {
			wg.Go(func() {
				<-startGun
				out[i] = h.CreateH2H(org, b)
			})
		}
		close(startGun)
		wg.Wait()
		return out
	}

	identical := make([]string, 50)
	for i := range identical {
		identical[i] = h2h(kv{"merchant_id", `"same"`})
	}
	ids, created := map[string]bool{}, 0
	for _, res := range run(identical) {
		switch res.Status {
		case 201:
			created++
		case 200:
		default:
			t.Fatalf("identical create: %d %s", res.Status, res.Body)
		}
		ids[str(res.JSON, "id")] = true
	}
	if created != 1 || len(ids) != 1 {
		t.Fatalf("identical creates: %d created, %d distinct ids; want 1 and 1", created, len(ids))
	}

	differing := make([]string, 50)
	for i := range differing {
		differing[i] = h2h(kv{"merchant_id", `"contested"`}, kv{"amount", fmt.Sprintf(`"%d"`, 100+i)})
	}
	created, conflicts := 0, 0
	var winner string
	for _, res := range run(differing) {
		switch {
		case res.Status == 201:
			created++
			winner = str(res.JSON, "id")
		case res.Status == 409 && res.ErrorCode() == "merchant_id_conflict":
			conflicts++
		default:
			t.Fatalf("differing create: %d %s", res.Status, res.Body)
		}
	}
	if created != 1 || conflicts != 49 {
		t.Fatalf("differing creates: %d created, %d conflicts; want 1 and 49", created, conflicts)
	}
	if res := h.GetDeposit(org, winner, true); res.Status != 200 {
		t.Fatalf("winner not readable: %d", res.Status)
	}
}

// assertJSONField compares the JSON value at a dotted path with want, both
// compacted, so the test states wire shapes literally.
func assertJSONField(t *testing.T, body []byte, path, want string) {
	t.Helper()
	var v any = json.RawMessage(body)
	for _, p := range strings.Split(path, ".") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v.(json.RawMessage), &m); err != nil {
			t.Fatalf("%s: not an object at %s: %s", path, p, body)
		}
		raw, ok := m[p]
		if !ok {
			t.Fatalf("%s: missing %s in %s", path, p, body)
		}
		v = raw
	}
	if got := string(v.(json.RawMessage)); got != want {
		t.Errorf("%s = %s, want %s", path, got, want)
	}
}

// assertKeys checks that a JSON object has exactly the given keys.
func assertKeys(t *testing.T, body []byte, keys ...string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not an object: %s", body)
	}
	if len(m) != len(keys) {
		t.Errorf("keys: got %d, want %d (%v): %s", len(m), len(keys), keys, body)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %q: %s", k, body)
		}
	}
}
