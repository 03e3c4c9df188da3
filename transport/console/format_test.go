package console_test

import (
	"context"
	"github.com/payd-engine/payd/provider/smsinbox"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

// TestPagesSayWhereTheyAre: in the sandbox every console page and payer
// page says so; amounts are grouped in lakhs (Bangla numerals in Bangla),
// statuses and methods are words in the page's language, times carry
// their zone, and a deposit shows its fee and net.
func TestPagesSayWhereTheyAre(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{DepositFeePercent: ptr(decimal.RequireFromString("1.5"))})
	d, _, err := srv.Engine.CreateDeposit(ctx, engine.CreateDepositParams{OrganizationID: org.ID, Amount: "120000",
		PaymentMethod: "bank", RedirectURL: "https://shop.example/back", MerchantID: "order-1"})
	if err != nil {
		t.Fatal(err)
	}
	operator(t, srv, "v@example.com", engine.RoleViewer, org.ID, false)
	b := newBrowser(t, srv)
	b.login("v@example.com", "")
	for _, path := range []string{"/console/", "/console/deposits", "/console/deposits/" + d.ID, "/console/wallets", "/console/links"} {
		if p := b.get(path); p.status != http.StatusOK || !strings.Contains(p.body, `id="sandbox-banner"`) {
			t.Errorf("%s: %d, no sandbox banner", path, p.status)
		}
	}
	p := b.get("/console/deposits/" + d.ID + "?lang=en")
	for _, want := range []string{"৳1,20,000.00", "Waiting for payment", "Bank transfer", "(Dhaka, UTC&#43;6)",
		`id="deposit-fee">৳1,800.00<`, `id="deposit-net">৳1,18,200.00<`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the deposit page lacks %q", want)
		}
	}
	p = b.get("/console/deposits/" + d.ID + "?lang=bn")
	for _, want := range []string{"৳১,২০,০০০.০০", "পেমেন্টের অপেক্ষায়", "ব্যাংক ট্রান্সফার", "ঢাকা", `id="deposit-fee">৳১,৮০০.০০<`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the Bangla deposit page lacks %q", want)
		}
	}
	if strings.Contains(p.body, ">pending<") {
		t.Error("the Bangla page shows a status code")
	}
	l, err := srv.Engine.CreatePaymentLink(ctx, org.ID, "1500", "")
	if err != nil {
		t.Fatal(err)
	}
	payer := newBrowser(t, srv)
	if p := payer.get("/pay/" + l.Token); !strings.Contains(p.body, `id="sandbox-banner"`) {
		t.Error("the payment link's page has no sandbox banner")
	}
}

// TestRootLeadsToTheConsole: the root URL sends a browser to the
// console; a client of the API (no text/html in Accept) still gets the
// JSON 404, and so does an unknown API path.
func TestRootLeadsToTheConsole(t *testing.T) {
	srv := paydtest.MustOpen(t)
	b := newBrowser(t, srv)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	if p := b.do(req); p.status != http.StatusSeeOther || p.header.Get("Location") != "/console/" {
		t.Errorf("a browser's GET /: %d %q", p.status, p.header.Get("Location"))
	}
	if p := b.get("/"); p.status != http.StatusNotFound || !strings.Contains(p.header.Get("Content-Type"), "json") {
		t.Errorf("an API client's GET /: %d %s", p.status, p.header.Get("Content-Type"))
	}
	p := b.get("/api/no-such-thing")
	if p.status != http.StatusNotFound || !strings.Contains(p.header.Get("Content-Type"), "json") {
		t.Errorf("an unknown API path: %d %s", p.status, p.header.Get("Content-Type"))
	}
}

// TestPayerPagesLookLikeTheShop: a link whose amount no method takes is
// refused when it is made, beside the amount with what was typed kept; a
// payer's page names the shop and offers only the methods it can take now,
// by their names. On the SMS inbox, without a wallet nothing can.
func TestPayerPagesLookLikeTheShop(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{Name: ptr("Dhaka Books")})
	operator(t, srv, "o@example.com", engine.RoleOperator, org.ID, false)
	b := newBrowser(t, srv)
	b.login("o@example.com", "")
	p := b.post("/console/links", url.Values{"amount": {"50"}, "note": {"Invoice 9"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="amount-error"`) ||
		!strings.Contains(p.body, `value="50"`) || !strings.Contains(p.body, `value="Invoice 9"`) {
		t.Fatalf("a ৳50 link: %d %s", p.status, p.body)
	}
	if ls, _ := srv.Engine.ListPaymentLinks(ctx, org.ID, 0); len(ls) != 0 {
		t.Fatalf("a refused link was made: %d", len(ls))
	}
	if p := b.post("/console/links?lang=bn", url.Values{"amount": {"abc"}}); !strings.Contains(p.body, "শূন্যের বেশি টাকার পরিমাণ") {
		t.Errorf("a bad amount in Bangla: %d", p.status)
	}
	l, err := srv.Engine.CreatePaymentLink(ctx, org.ID, "500", "")
	if err != nil {
		t.Fatal(err)
	}
	p = newBrowser(t, srv).get("/pay/" + l.Token)
	for _, want := range []string{`id="shop">Dhaka Books<`, "Pay with bKash (agent cash-out)", `id="pay-reference">` + l.ID} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the pay page lacks %q", want)
		}
	}
	// 500 is below the bank's range: not offered.
	if strings.Contains(p.body, `id="pay-bank"`) || strings.Contains(p.body, "payd console") {
		t.Error("the pay page offers the bank or names the console")
	}

	inbox := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{}))
	iorg := inbox.NewOrg(engine.OrganizationSettings{})
	if _, err := inbox.Engine.CreatePaymentLink(ctx, iorg.ID, "500", ""); engine.ErrorCode(err) != engine.CodeInvalidRequest {
		t.Fatalf("a link no wallet can take: %v", err)
	}
	if _, err := inbox.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: iorg.ID, Channel: "bkash", Operation: "send_money", Phone: "01711000002", Name: "Shop"}); err != nil {
		t.Fatal(err)
	}
	methods, err := inbox.Engine.PayableMethods(ctx, iorg.ID, decimal.RequireFromString("500"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("with a bKash personal wallet: %v", methods)
	for _, m := range methods {
		if m != "bkash" {
			t.Errorf("offered %s with only a bKash personal wallet", m)
		}
	}
}

// TestSetupCredentialsInTheBrowser: the owner adds a webhook endpoint and
// an API key from the browser, each secret shown once and audited; a
// viewer and an operator are refused (403) and a POST without the
// session's CSRF token is refused, none of them changing anything; a bad
// URL is said beside the field with what was typed kept.
func TestSetupCredentialsInTheBrowser(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator, engine.RoleOwner} {
		operator(t, srv, role+"@example.com", role, org.ID, false)
	}
	state := func() (int, int) {
		eps, _ := srv.Engine.ListWebhookEndpoints(ctx, org.ID)
		keys, _ := srv.Engine.ListAPIKeys(ctx, org.ID)
		return len(eps), len(keys)
	}
	eps0, keys0 := state()
	hook := url.Values{"url": {"https://shop.example/payd/webhook"}}
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator} {
		b := newBrowser(t, srv)
		b.login(role+"@example.com", "")
		if p := b.post("/console/webhooks", clone(hook)); p.status != http.StatusForbidden {
			t.Errorf("%s adding an endpoint: %d, want 403", role, p.status)
		}
		if p := b.post("/console/keys", nil); p.status != http.StatusForbidden {
			t.Errorf("%s creating a key: %d, want 403", role, p.status)
		}
		if p := b.get("/console/webhooks"); strings.Contains(p.body, `id="webhook-add"`) {
			t.Errorf("%s is offered the endpoint form", role)
		}
	}
	o := newBrowser(t, srv)
	o.login("owner@example.com", "")
	other := newBrowser(t, srv)
	other.login("viewer@example.com", "")
	for _, csrf := range []string{"", other.csrf} {
		f := clone(hook)
		f.Set("csrf", csrf)
		if p := o.post("/console/webhooks", f); p.status != http.StatusForbidden {
			t.Errorf("an endpoint with CSRF token %q: %d, want 403", csrf, p.status)
		}
		if p := o.post("/console/keys", url.Values{"csrf": {csrf}}); p.status != http.StatusForbidden {
			t.Errorf("a key with CSRF token %q: %d, want 403", csrf, p.status)
		}
	}
	if eps, keys := state(); eps != eps0 || keys != keys0 {
		t.Fatalf("refused requests changed endpoints %d→%d, keys %d→%d", eps0, eps, keys0, keys)
	}
	if p := o.post("/console/webhooks", url.Values{"url": {"ftp://nope"}}); p.status != http.StatusBadRequest ||
		!strings.Contains(p.body, `id="url-error"`) || !strings.Contains(p.body, `value="ftp://nope"`) {
		t.Errorf("a bad URL: %d", p.status)
	}
	p := o.post("/console/webhooks", clone(hook))
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="webhook-secret"`) {
		t.Fatalf("add an endpoint: %d", p.status)
	}
	if p := o.get("/console/webhooks"); strings.Contains(p.body, `id="webhook-secret"`) {
		t.Error("the secret is shown again")
	}
	if p := o.post("/console/keys", nil); p.status != http.StatusOK || !strings.Contains(p.body, `id="new-key"`) {
		t.Fatalf("create a key: %d", p.status)
	}
	if eps, keys := state(); eps != eps0+1 || keys != keys0+1 {
		t.Fatalf("endpoints %d, keys %d after the owner's", eps, keys)
	}
	es, _ := srv.Engine.ListAudit(ctx, org.ID, 0)
	seen := map[string]bool{}
	for _, e := range es {
		if e.Actor == "console:owner@example.com" {
			seen[e.Action] = true
		}
	}
	if !seen[engine.AuditWebhookAdd] || !seen[engine.AuditKeyCreate] {
		t.Errorf("audited by the owner: %v", seen)
	}
}

// TestPlatformLinksKeepTheOrganization: a platform operator's links name
// the organization as a query (org=ID), not an escaped "org%3dID" that
// would fall back to the first organization.
func TestPlatformLinksKeepTheOrganization(t *testing.T) {
	srv := paydtest.MustOpen(t)
	srv.NewOrg(engine.OrganizationSettings{})
	org := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "p@example.com", engine.RoleViewer, "", false)
	b := newBrowser(t, srv)
	b.login("p@example.com", "")
	p := b.get("/console/?org=" + org.ID)
	if !strings.Contains(p.body, "/console/deposits?org="+org.ID+`"`) || strings.Contains(p.body, "org%3d") {
		t.Errorf("the navigation's links lose the organization")
	}
}
