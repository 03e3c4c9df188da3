package transport_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

// listPage is the body of a list answer.
type listPage struct {
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
}

func (h *harness) list(org *testOrg, path string, sign bool) (*response, listPage) {
	h.t.Helper()
	res := h.Do(org, request{Method: http.MethodGet, Path: "/api" + path, APIKey: org.APIKey, Sign: sign})
	var page listPage
	if res.Status == http.StatusOK {
		if err := json.Unmarshal(res.Body, &page); err != nil {
			h.t.Fatalf("%s: %v: %s", path, err, res.Body)
		}
		if page.Data == nil {
			h.t.Fatalf("%s: data is not an array: %s", path, res.Body)
		}
	}
	return res, page
}

// mustList is list that must answer 200.
func (h *harness) mustList(org *testOrg, path string, sign bool) listPage {
	h.t.Helper()
	res, page := h.list(org, path, sign)
	if res.Status != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
	}
	return page
}

func itemID(t *testing.T, item json.RawMessage) string {
	t.Helper()
	var v struct{ ID string }
	if err := json.Unmarshal(item, &v); err != nil || v.ID == "" {
		t.Fatalf("item without id: %s", item)
	}
	return v.ID
}

// redirectDeposits creates n redirect deposits of org a second apart and
// returns their IDs, oldest first.
func (h *harness) redirectDeposits(org *testOrg, prefix string, n int) []string {
	h.t.Helper()
	var ids []string
	for i := range n {
		h.Clock.Add(time.Second)
		method := []string{`"bkash"`, `"nagad"`}[i%2]
		res := h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", fmt.Sprintf(`"%s-%d"`, prefix, i)}, kv{"payment_method", method})})
		if res.Status != http.StatusCreated && res.Status != http.StatusOK {
			h.t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		ids = append(ids, str(res.JSON, "id"))
	}
	return ids
}

func reversed(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[len(ids)-1-i] = id
	}
	return out
}

// TestListDepositsPages: newest first, every item exactly the body of its
// own GET, has_more right, starting_after and ending_before each walk the
// whole list in pages without repeating or skipping an item.
func TestListDepositsPages(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	ids := h.redirectDeposits(org, "p", 7)
	newest := reversed(ids)

	page := h.mustList(org, "/v1/deposits", false)
	if len(page.Data) != 7 || page.HasMore {
		t.Fatalf("default page: %d items, has_more %v", len(page.Data), page.HasMore)
	}
	for i, item := range page.Data {
		if id := itemID(t, item); id != newest[i] {
			t.Fatalf("item %d = %s, want %s", i, id, newest[i])
		}
		single := h.GetDeposit(org, newest[i], false)
		if strings.TrimSpace(string(single.Body)) != string(item) {
			t.Errorf("list item\n%s\nGET\n%s", item, single.Body)
		}
	}

	var forward []string
	after := ""
	for {
		q := "/v1/deposits?limit=3"
		if after != "" {
			q += "&starting_after=" + after
		}
		p := h.mustList(org, q, false)
		for _, item := range p.Data {
			forward = append(forward, itemID(t, item))
		}
		if !p.HasMore {
			break
		}
		after = forward[len(forward)-1]
	}
	if fmt.Sprint(forward) != fmt.Sprint(newest) {
		t.Errorf("starting_after walk = %v, want %v", forward, newest)
	}
	var backward []string
	before := ids[0]
	backward = append(backward, before)
	for {
		p := h.mustList(org, "/v1/deposits?limit=2&ending_before="+before, false)
		var got []string
		for _, item := range p.Data {
			got = append(got, itemID(t, item))
		}
		backward = append(got, backward...)
		if !p.HasMore {
			break
		}
		before = got[0]
	}
	if fmt.Sprint(backward) != fmt.Sprint(newest) {
		t.Errorf("ending_before walk = %v, want %v", backward, newest)
	}
	if p := h.mustList(org, "/v1/deposits?limit=7", false); p.HasMore {
		t.Error("limit 7 of 7: has_more")
	}
	if p := h.mustList(org, "/v1/deposits?limit=6", false); !p.HasMore || len(p.Data) != 6 {
		t.Errorf("limit 6 of 7: %d items, has_more %v", len(p.Data), p.HasMore)
	}
}

func TestListDepositsFilters(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	start := h.Now()
	ids := h.redirectDeposits(org, "f", 6) // created at start+1s .. start+6s
	ts := func(s int) string {
		return url.QueryEscape(start.Add(time.Duration(s) * time.Second).Format(time.RFC3339))
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"payment_method=nagad", []string{ids[5], ids[3], ids[1]}},
		{"payment_method=bkash&limit=2", []string{ids[4], ids[2]}},
		{"merchant_id=f-3", []string{ids[3]}},
		{"merchant_id=nobody", nil},
		{"status=pending", reversed(ids)},
		{"status=succeeded", nil},
		{"created[gte]=" + ts(2) + "&created[lt]=" + ts(4), []string{ids[2], ids[1]}},
		{"created[gte]=" + ts(5), []string{ids[5], ids[4]}},
		{"provider_transaction_id=NONE", nil},
		{"payment_method=nagad&starting_after=" + ids[3], []string{ids[1]}},
	} {
		p := h.mustList(org, "/v1/deposits?"+c.query, false)
		var got []string
		for _, item := range p.Data {
			got = append(got, itemID(t, item))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.query, got, c.want)
		}
	}
}

// TestListIsolation: another organization's IDs, as a cursor, a filter or
// a path, never show its rows or tell whether they exist: a cursor of
// theirs is refused exactly as an ID that does not exist.
func TestListIsolation(t *testing.T) {
	h := newHarness(t)
	a := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	b := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	mine := h.redirectDeposits(a, "same", 2)
	theirs := h.redirectDeposits(b, "same", 3)
	h.Fund(a, "10000")
	h.Fund(b, "10000")
	wdA := h.Do(a, request{Path: "/api/v1/withdraws", APIKey: a.APIKey, Body: withdrawal(kv{"merchant_id", `"w"`})})
	wdB := h.Do(b, request{Path: "/api/v1/withdraws", APIKey: b.APIKey, Body: withdrawal(kv{"merchant_id", `"w"`})})
	if wdA.Status != 201 || wdB.Status != 201 {
		t.Fatalf("withdrawals: %d %d", wdA.Status, wdB.Status)
	}
	theirEvents := h.mustList(b, "/v1/events", false)
	theirTxns := h.mustList(b, "/v1/balance/transactions", false)
	if len(theirEvents.Data) == 0 || len(theirTxns.Data) == 0 {
		t.Fatalf("org b has %d events, %d balance transactions", len(theirEvents.Data), len(theirTxns.Data))
	}
	theirEvent, theirTxn, theirWd := itemID(t, theirEvents.Data[0]), itemID(t, theirTxns.Data[0]), str(wdB.JSON, "id")

	// Lists show only a's rows.
	for _, path := range []string{"/v1/deposits?limit=100", "/v1/withdraws?limit=100", "/v1/events?limit=100", "/v1/balance/transactions?limit=100",
		"/v1/deposits?merchant_id=same-2", "/v1/withdraws?merchant_id=w", "/v1/events?resource_id=" + theirs[0], "/v1/events?resource_id=" + theirWd} {
		for _, item := range h.mustList(a, path, false).Data {
			s := string(item)
			for _, id := range append(theirs, theirEvent, theirTxn, theirWd) {
				if strings.Contains(s, id) {
					t.Errorf("%s: a sees b's %s: %s", path, id, s)
				}
			}
		}
	}
	// b's row as a cursor is an unknown cursor, word for word.
	for _, c := range []struct{ path, theirs, none string }{
		{"/v1/deposits", theirs[1], "dep_00000000000000000000000000"},
		{"/v1/withdraws", theirWd, "wd_00000000000000000000000000"},
		{"/v1/events", theirEvent, "evt_00000000000000000000000000"},
		{"/v1/balance/transactions", theirTxn, "txn_00000000000000000000000000_available"},
		{"/v1/events", mine[0], "dep_x"}, // a's own deposit is no event
	} {
		for _, param := range []string{"starting_after", "ending_before"} {
			got, _ := h.list(a, c.path+"?"+param+"="+c.theirs, false)
			unknown, _ := h.list(a, c.path+"?"+param+"="+c.none, false)
			if got.Status != 400 || got.ErrorCode() != "invalid_request" || !strings.HasPrefix(got.ErrorMessage(), param+": ") {
				t.Errorf("%s %s=%s: %d %s", c.path, param, c.theirs, got.Status, got.Body)
			}
			if strings.ReplaceAll(got.ErrorMessage(), c.theirs, "ID") != strings.ReplaceAll(unknown.ErrorMessage(), c.none, "ID") {
				t.Errorf("%s: b's cursor answers %q, an unknown one %q", c.path, got.ErrorMessage(), unknown.ErrorMessage())
			}
		}
	}
	// b's event by ID: not found, as one that does not exist.
	got := h.Do(a, request{Method: "GET", Path: "/api/v1/events/" + theirEvent, APIKey: a.APIKey})
	none := h.Do(a, request{Method: "GET", Path: "/api/v1/events/evt_00000000000000000000000000", APIKey: a.APIKey})
	if got.Status != 404 || got.ErrorCode() != "not_found" || string(got.Body) != string(none.Body) {
		t.Errorf("b's event: %d %s; unknown: %s", got.Status, got.Body, none.Body)
	}
	if own := h.Do(b, request{Method: "GET", Path: "/api/v1/events/" + theirEvent, APIKey: b.APIKey}); own.Status != 200 ||
		strings.TrimSpace(string(own.Body)) != string(theirEvents.Data[0]) {
		t.Errorf("b's own event: %d %s", own.Status, own.Body)
	}
}

// TestListBadParameters: anything unknown or malformed is 400 naming the
// parameter, in the error envelope.
func TestListBadParameters(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	for _, c := range []struct{ path, param string }{
		{"/v1/deposits?limit=0", "limit"},
		{"/v1/deposits?limit=101", "limit"},
		{"/v1/deposits?limit=ten", "limit"},
		{"/v1/deposits?limit=+5", "limit"},
		{"/v1/deposits?limit=05", "limit"},
		{"/v1/deposits?limit=1&limit=2", "limit"},
		{"/v1/deposits?limit=", "limit"},
		{"/v1/deposits?colour=red", "colour"},
		{"/v1/deposits?created[gt]=2025-01-01T00:00:00Z", "created[gt]"},
		{"/v1/deposits?created[gte]=yesterday", "created[gte]"},
		{"/v1/deposits?created[lt]=2025-01-01", "created[lt]"},
		{"/v1/deposits?created[gte]=2025-02-01T00:00:00Z&created[lt]=2025-01-01T00:00:00Z", "created[lt]"},
		{"/v1/deposits?status=paid", "status"},
		{"/v1/deposits?payment_method=cash", "payment_method"},
		{"/v1/deposits?starting_after=dep_1&ending_before=dep_2", "ending_before"},
		{"/v1/deposits?starting_after=dep_nope", "starting_after"},
		{"/v1/deposits?merchant_id=a%00b", "merchant_id"},
		{"/v1/deposits?merchant_id=%FF", "merchant_id"},
		{"/v1/deposits?merchant_id=" + strings.Repeat("m", 300), "merchant_id"},
		{"/v1/deposits?starting_after=" + strings.Repeat("d", 300), "starting_after"},
		{"/v1/deposits?type=deposit.succeeded", "type"},
		{"/v1/deposits?%zz", "query"},
		{"/v1/withdraws?status=pending", "status"},
		{"/v1/withdraws?payment_method=bkash_agent", "payment_method"},
		{"/v1/withdraws?resource_id=x", "resource_id"},
		{"/v1/events?type=deposit.paid", "type"},
		{"/v1/events?status=succeeded", "status"},
		{"/v1/events?resource_id=a%01", "resource_id"},
		{"/v1/balance/transactions?account=fees", "account"},
		{"/v1/balance/transactions?status=succeeded", "status"},
		{"/v1/balance/transactions?ending_before=txn_x", "ending_before"},
	} {
		res, _ := h.list(org, c.path, false)
		if res.Status != 400 || res.ErrorCode() != "invalid_request" || !strings.HasPrefix(res.ErrorMessage(), c.param+": ") {
			t.Errorf("%s: %d %s, want 400 naming %s", c.path, res.Status, res.Body, c.param)
		}
	}
	if res := h.Do(org, request{Method: "GET", Path: "/api/v1/deposits"}); res.Status != 401 {
		t.Errorf("without a key: %d %s", res.Status, res.Body)
	}
	if res := h.Do(org, request{Method: "DELETE", Path: "/api/v1/events", APIKey: org.APIKey}); res.Status != 405 {
		t.Errorf("DELETE /v1/events: %d %s", res.Status, res.Body)
	}
}

// TestListsSignedForH2H: an organization that takes H2H deposits signs its
// lists of deposits, events and balance transactions and its event reads,
// as it signs GET /v1/deposits/{id}; withdrawals stay bearer.
func TestListsSignedForH2H(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dep := h.CreateH2H(org, h2h())
	if dep.Status != 201 {
		t.Fatalf("create: %d %s", dep.Status, dep.Body)
	}
	h.Fund(org, "1000")
	for _, path := range []string{"/v1/deposits", "/v1/events", "/v1/deposits?limit=1", "/v1/balance/transactions"} {
		if res, _ := h.list(org, path, false); res.Status != 401 {
			t.Errorf("%s unsigned: %d %s", path, res.Status, res.Body)
		}
		page := h.mustList(org, path, true)
		if path == "/v1/deposits" {
			if len(page.Data) != 1 || strings.TrimSpace(string(h.GetDeposit(org, str(dep.JSON, "id"), true).Body)) != string(page.Data[0]) {
				t.Errorf("signed deposits: %s", page.Data)
			}
		}
	}
	h.mustList(org, "/v1/withdraws", false)
	// A wrong signature is refused too.
	res := h.Do(org, request{Method: "GET", Path: "/api/v1/deposits", APIKey: org.APIKey, Sign: true, Secret: "payd_ss_wrong"})
	if res.Status != 401 {
		t.Errorf("wrongly signed: %d %s", res.Status, res.Body)
	}
}

// TestListEventsAreWebhookBodies: GET /v1/events and /v1/events/{id} give
// exactly the bodies the webhooks carried, filtered by type and resource.
func TestListEventsAreWebhookBodies(t *testing.T) {
	h := webhookHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	rcv := paydtest.NewReceiver(t, nil)
	h.addEndpoint(org, rcv.URL+"/hooks")
	h.Fund(org, "5000")
	var wds []string
	for i := range 3 {
		h.Clock.Add(time.Second)
		res := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", fmt.Sprintf(`"w%d"`, i)})})
		wds = append(wds, str(res.JSON, "id"))
	}
	h.Work()
	h.Clock.Add(5 * time.Second)
	h.Work()
	for h.deliver() > 0 {
	}
	delivered := map[string]string{}
	for _, d := range rcv.Deliveries() {
		delivered[d.Header.Get("webhook-id")] = string(d.Body)
	}
	page := h.mustList(org, "/v1/events?limit=100", false)
	if len(page.Data) != len(delivered) || len(delivered) < 3 {
		t.Fatalf("%d events listed, %d delivered", len(page.Data), len(delivered))
	}
	for _, item := range page.Data {
		id := itemID(t, item)
		if delivered[id] != string(item) {
			t.Errorf("event %s listed\n%s\ndelivered\n%s", id, item, delivered[id])
		}
		one := h.Do(org, request{Method: "GET", Path: "/api/v1/events/" + id, APIKey: org.APIKey})
		if one.Status != 200 || strings.TrimSpace(string(one.Body)) != delivered[id] {
			t.Errorf("GET event %s: %d %s", id, one.Status, one.Body)
		}
	}
	created := h.mustList(org, "/v1/events?type=withdraw.created", false)
	if len(created.Data) != 3 {
		t.Errorf("withdraw.created: %d events", len(created.Data))
	}
	byResource := h.mustList(org, "/v1/events?resource_id="+wds[1], false)
	for _, item := range byResource.Data {
		var ev struct{ Data struct{ ID string } }
		_ = json.Unmarshal(item, &ev)
		if ev.Data.ID != wds[1] {
			t.Errorf("resource filter listed %s", item)
		}
	}
	if len(byResource.Data) == 0 {
		t.Error("resource filter listed nothing")
	}
}

// TestBalanceTransactions: every movement of available and held, with the
// balance after it; the newest balance_after is GET /v1/balance.
func TestBalanceTransactions(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	h.Fund(org, "1000")
	h.Clock.Add(time.Second)
	wd := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"amount", `"300"`})})
	if wd.Status != 201 {
		t.Fatalf("withdraw: %d %s", wd.Status, wd.Body)
	}
	page := h.mustList(org, "/v1/balance/transactions", false)
	type txn struct {
		ID, Account, Kind, Amount, Currency string
		BalanceAfter                        string  `json:"balance_after"`
		ResourceID                          *string `json:"resource_id"`
		CreatedAt                           string  `json:"created_at"`
	}
	var got []txn
	for _, item := range page.Data {
		var x txn
		if err := json.Unmarshal(item, &x); err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	if len(got) != 3 {
		t.Fatalf("%d balance transactions: %s", len(got), page.Data)
	}
	// The hold moved available down and held up; the funding came first.
	var balance struct{ Available, Held string }
	_ = json.Unmarshal([]byte(h.Balance(org)), &balance)
	want := map[string]txn{
		"held":      {Account: "held", Kind: "withdrawal_hold", BalanceAfter: balance.Held},
		"available": {Account: "available", Kind: "withdrawal_hold", BalanceAfter: balance.Available},
	}
	for _, x := range got[:2] {
		w := want[x.Account]
		if x.Kind != w.Kind || x.BalanceAfter != w.BalanceAfter || x.ResourceID == nil || *x.ResourceID != str(wd.JSON, "id") || x.Currency != "BDT" {
			t.Errorf("movement %+v, want %+v", x, w)
		}
	}
	if f := got[2]; f.Kind != "adjustment" || f.Amount != "1000.00" || f.BalanceAfter != "1000.00" || f.ResourceID != nil {
		t.Errorf("funding: %+v", f)
	}
	if held := h.mustList(org, "/v1/balance/transactions?account=held", false); len(held.Data) != 1 {
		t.Errorf("account=held: %s", held.Data)
	}
}

// TestListsSignedForPastH2H: an organization that stopped taking H2H
// deposits still signs to list its H2H deposits and their events, as it
// signs GET /v1/deposits/{id} of one: an unsigned list would be a way
// around that.
func TestListsSignedForPastH2H(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dep := h.CreateH2H(org, h2h())
	if dep.Status != 201 {
		t.Fatalf("create: %d %s", dep.Status, dep.Body)
	}
	h.Clock.Add(time.Hour)
	h.Work() // expired: a deposit.expired event carrying the H2H deposit
	if _, err := h.Engine.UpdateOrganization(t.Context(), org.ID, engine.OrganizationSettings{H2HEnabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	events := h.mustList(org, "/v1/events", true)
	if len(events.Data) != 1 {
		t.Fatalf("events: %s", events.Data)
	}
	for _, path := range []string{"/v1/deposits", "/v1/events", "/v1/events/" + itemID(t, events.Data[0])} {
		get := func(sign bool) *response {
			return h.Do(org, request{Method: http.MethodGet, Path: "/api" + path, APIKey: org.APIKey, Sign: sign})
		}
		if res := get(false); res.Status != 401 {
			t.Errorf("%s unsigned: %d %s", path, res.Status, res.Body)
		}
		if res := get(true); res.Status != 200 {
			t.Errorf("%s signed: %d %s", path, res.Status, res.Body)
		}
	}
}
