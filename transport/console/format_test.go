package console_test

import (
	"context"
	"net/http"
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

// TestRootLeadsToTheConsole: the root URL sends a person to the console;
// an unknown API path is still the API's JSON 404.
func TestRootLeadsToTheConsole(t *testing.T) {
	srv := paydtest.MustOpen(t)
	b := newBrowser(t, srv)
	if p := b.get("/"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/console/" {
		t.Errorf("GET /: %d %q", p.status, p.header.Get("Location"))
	}
	p := b.get("/api/no-such-thing")
	if p.status != http.StatusNotFound || !strings.Contains(p.header.Get("Content-Type"), "json") {
		t.Errorf("an unknown API path: %d %s", p.status, p.header.Get("Content-Type"))
	}
}
