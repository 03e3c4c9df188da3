package httpsuite

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// checkLists: payd's list extensions (GET /v1/deposits, /v1/withdraws,
// /v1/events, /v1/balance/transactions). Paging by starting_after and by
// ending_before sees every item once, none skipped while other items are
// created meanwhile; each item is the body of its own GET; another
// organization's items never show and its IDs are refused as cursors
// exactly like IDs that do not exist; bad parameters are 400 naming them.
func (s *suite) checkLists(t T) {
	// An organization of its own, so that the suite knows its whole list.
	o := s.newOrg(t, "lists", OrgOptions{H2H: true})
	const before = 11
	var created []string
	create := func(i int) (string, error) {
		res, err := s.send(t.Context(), request{method: http.MethodPost, path: "/v1/deposits", org: o,
			body: redirectBody("150", "bkash", s.mid(fmt.Sprintf("list-%d", i)), "")})
		if err != nil {
			return "", err
		}
		if res.status != http.StatusOK && res.status != http.StatusCreated {
			return "", fmt.Errorf("create: %s", res)
		}
		return str(res.json, "id"), nil
	}
	for i := range before {
		id, err := create(i)
		if err != nil {
			t.Fatalf("%v", err)
		}
		created = append(created, id)
	}

	// The whole list in one page is the truth the walks are held to.
	all := s.listPage(t, o, "/v1/deposits?limit=100")
	if len(all.Data) != before || all.HasMore {
		t.Fatalf("GET /v1/deposits?limit=100: %d items, has_more %v, want %d and false", len(all.Data), all.HasMore, before)
	}
	var newest []string
	for _, item := range all.Data {
		id := str(item, "id")
		newest = append(newest, id)
		single := s.getDeposit(t, o, id)
		if !sameJSON(item, any(single)) {
			t.Errorf("list item %s differs from its GET in %v", id, diffKeys(item, single))
		}
	}
	if !sameSet(newest, created) {
		t.Fatalf("list %v, created %v", newest, created)
	}

	// Walk forward and backward while deposits are created: two after
	// every page, between the page and the next.
	var during []string
	more := func() {
		for range 2 {
			id, err := create(before + len(during))
			if err != nil {
				t.Fatalf("creating during the walk: %v", err)
			}
			during = append(during, id)
		}
	}
	forward := s.walkList(t, o, "/v1/deposits?limit=3", "starting_after", "", more)
	backward := s.walkList(t, o, "/v1/deposits?limit=4", "ending_before", newest[len(newest)-1], more)
	// Forward from the newest: whatever was created meanwhile may or may
	// not show, but every item there before shows once, in the list's
	// order.
	if got := without(forward, during); strings.Join(got, ",") != strings.Join(newest, ",") {
		t.Errorf("starting_after walk, items created meanwhile left out: %v, want %v", got, newest)
	}
	// Backward from the oldest: the same, newest first once put together;
	// it reaches the newest, so it shows every item created meanwhile
	// before its last page.
	if got := without(backward, during); strings.Join(got, ",") != strings.Join(newest[:len(newest)-1], ",") {
		t.Errorf("ending_before walk, items created meanwhile left out: %v, want %v", got, newest[:len(newest)-1])
	}
	if n := len(backward) - (len(newest) - 1); n < len(during)-2 {
		t.Errorf("ending_before walk showed %d of the %d items created before its last page", n, len(during)-2)
	}
	t.Logf("%d deposits created during the walks", len(during))

	// Isolation: a's list never shows o's deposits; o's IDs are unknown
	// cursors to a, answered word for word as an ID that never existed.
	for _, item := range s.listPage(t, s.a, "/v1/deposits?limit=100").Data {
		if contains(created, str(item, "id")) {
			t.Errorf("a's list shows %s of another organization", str(item, "id"))
		}
	}
	for _, param := range []string{"starting_after", "ending_before"} {
		theirs := s.do(t, request{method: http.MethodGet, path: "/v1/deposits?" + param + "=" + created[0], org: s.a, sign: true})
		none := s.do(t, request{method: http.MethodGet, path: "/v1/deposits?" + param + "=dep_00000000000000000000000000", org: s.a, sign: true})
		expectParamError(t, "a pages from o's deposit", theirs, param)
		if strings.ReplaceAll(theirs.errorMessage(), created[0], "ID") != strings.ReplaceAll(none.errorMessage(), "dep_00000000000000000000000000", "ID") {
			t.Errorf("o's deposit as a's cursor answers %q, an unknown one %q", theirs.errorMessage(), none.errorMessage())
		}
	}
	if res := s.do(t, request{method: http.MethodGet, path: "/v1/deposits?merchant_id=" + url.QueryEscape(s.mid("list-0")), org: s.a, sign: true}); res.status == http.StatusOK {
		if n := len(listOf(res).Data); n != 0 {
			t.Errorf("a's list by o's merchant_id shows %d deposits", n)
		}
	} else {
		t.Errorf("a's list by o's merchant_id: %s", res)
	}
	// The merchant_id filter finds o's own.
	if page := s.listPage(t, o, "/v1/deposits?merchant_id="+url.QueryEscape(s.mid("list-3"))); len(page.Data) != 1 || str(page.Data[0], "id") != created[3] {
		t.Errorf("merchant_id filter: %v", page.Data)
	}

	// Bad parameters: 400 naming the parameter.
	for _, c := range []struct{ query, param string }{
		{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=x", "limit"}, {"limit=1&limit=2", "limit"},
		{"colour=red", "colour"}, {"status=paid", "status"}, {"created[gte]=yesterday", "created[gte]"},
		{"starting_after=dep_1&ending_before=dep_2", "ending_before"}, {"merchant_id=a%00b", "merchant_id"},
	} {
		res := s.do(t, request{method: http.MethodGet, path: "/v1/deposits?" + c.query, org: o, sign: true})
		expectParamError(t, "GET /v1/deposits?"+c.query, res, c.param)
	}
	for _, path := range []string{"/v1/withdraws?type=x", "/v1/events?status=x", "/v1/balance/transactions?account=fees"} {
		res := s.do(t, request{method: http.MethodGet, path: path, org: o, sign: true})
		expectParamError(t, "GET "+path, res, path[strings.Index(path, "?")+1:strings.Index(path, "=")])
	}
	// An H2H organization signs its lists that show deposits (a balance
	// transaction names its deposit and amount); withdrawals are bearer,
	// as their own GET.
	for _, path := range []string{"/v1/deposits", "/v1/events", "/v1/balance/transactions"} {
		expectError(t, "unsigned GET "+path+" of an H2H organization", s.do(t, request{method: http.MethodGet, path: path, org: o}),
			http.StatusUnauthorized, "unauthorized", "missing_signature")
	}
	expectStatus(t, "unsigned GET /v1/withdraws of an H2H organization", s.do(t, request{method: http.MethodGet, path: "/v1/withdraws", org: o}), http.StatusOK)
	// The other lists answer the same shape.
	for _, path := range []string{"/v1/withdraws", "/v1/events", "/v1/balance/transactions"} {
		if page := s.listPage(t, o, path); len(page.Data) != 0 || page.HasMore {
			t.Errorf("%s of a new organization without withdrawals: %d items", path, len(page.Data))
		}
	}
}

// list is a list answer, items decoded as the suite decodes bodies.
type list struct {
	Data    []any
	HasMore bool
}

func listOf(res *response) list {
	m := res.object()
	data, _ := m["data"].([]any)
	more, _ := m["has_more"].(bool)
	return list{Data: data, HasMore: more}
}

// listPage GETs a list of o (signed) that must answer 200 in the list's
// shape.
func (s *suite) listPage(t T, o *org, path string) list {
	t.Helper()
	res := s.do(t, request{method: http.MethodGet, path: path, org: o, sign: true})
	expectStatus(t, "GET "+path, res, http.StatusOK)
	m := res.object()
	if _, ok := m["data"].([]any); !ok || len(m) != 2 {
		t.Fatalf("GET %s: not {\"data\": [...], \"has_more\": bool}: %s", path, res)
	}
	if _, ok := m["has_more"].(bool); !ok {
		t.Fatalf("GET %s: has_more is not a boolean: %s", path, res)
	}
	return listOf(res)
}

// walkList pages through a list from cursor (or the start) with param,
// and returns the IDs newest first. It fails on an item seen twice.
func (s *suite) walkList(t T, o *org, path, param, cursor string, between func()) []string {
	t.Helper()
	var ids []string
	seen := map[string]bool{}
	for range 1000 {
		p := path
		if cursor != "" {
			p += "&" + param + "=" + cursor
		}
		page := s.listPage(t, o, p)
		var got []string
		for _, item := range page.Data {
			id := str(item, "id")
			if seen[id] {
				t.Fatalf("%s: %s twice", path, id)
			}
			seen[id] = true
			got = append(got, id)
		}
		if param == "ending_before" {
			ids = append(got, ids...)
		} else {
			ids = append(ids, got...)
		}
		if !page.HasMore || len(got) == 0 {
			return ids
		}
		between()
		if param == "ending_before" {
			cursor = got[0]
		} else {
			cursor = got[len(got)-1]
		}
	}
	t.Fatalf("%s: the walk did not end", path)
	return nil
}

// expectParamError checks a 400 invalid_request naming param.
func expectParamError(t T, what string, res *response, param string) {
	t.Helper()
	if res.status != http.StatusBadRequest || res.errorCode() != "invalid_request" || !strings.HasPrefix(res.errorMessage(), param+": ") {
		t.Errorf("%s: got %s, want 400 invalid_request naming %s", what, res, param)
		return
	}
	checkShape(t, what, res.json, errorSchema)
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !contains(b, x) {
			return false
		}
	}
	return true
}

// without returns ids less those in drop, in order.
func without(ids, drop []string) []string {
	var out []string
	for _, id := range ids {
		if !contains(drop, id) {
			out = append(out, id)
		}
	}
	return out
}
