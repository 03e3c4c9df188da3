package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

var adjustForm = regexp.MustCompile(`name="journal_id" value="([^"]+)"><input type="hidden" name="journal_mac" value="([^"]+)"`)

// adjustFields reads the adjustment form the balance page gives b.
func adjustFields(t *testing.T, b *browser) url.Values {
	t.Helper()
	p := b.get("/console/balance")
	m := adjustForm.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no adjustment form: %d", p.status)
	}
	return url.Values{"journal_id": {m[1]}, "journal_mac": {m[2]}, "amount": {"250"}, "reason": {"opening float"}, "direction": {"credit"}}
}

func adjustments(t *testing.T, srv *paydtest.Server, orgID string) int {
	t.Helper()
	js, err := srv.Engine.ListJournals(context.Background(), orgID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range js {
		if j.Kind == engine.JournalAdjustment {
			n++
		}
	}
	return n
}

// TestBalanceAdjustOnce: the owner adjusts the balance from the browser
// with a reason, audited; the same form sent again, or by many goroutines
// at once (a double tap, a replay), is one adjustment; a form naming a
// journal ID the page did not give (another organization's, say) is
// refused; viewers and operators are refused (403), and so is a POST
// without the session's CSRF token.
func TestBalanceAdjustOnce(t *testing.T) {
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator, engine.RoleOwner} {
		operator(t, srv, role+"@example.com", role, org.ID, false)
	}
	o := newBrowser(t, srv)
	o.login("owner@example.com", "")
	form := adjustFields(t, o)
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator} {
		b := newBrowser(t, srv)
		b.login(role+"@example.com", "")
		if p := b.post("/console/balance/adjust", clone(form)); p.status != http.StatusForbidden {
			t.Errorf("%s adjusting: %d, want 403", role, p.status)
		}
		if p := b.get("/console/balance"); p.status != http.StatusOK || strings.Contains(p.body, `id="adjust-form"`) {
			t.Errorf("%s's balance page: %d, offers the adjustment: %v", role, p.status, strings.Contains(p.body, `id="adjust-form"`))
		}
	}
	noCSRF := clone(form)
	noCSRF.Set("csrf", "")
	if p := o.post("/console/balance/adjust", noCSRF); p.status != http.StatusForbidden {
		t.Errorf("without a CSRF token: %d, want 403", p.status)
	}
	forged := clone(form)
	forged.Set("journal_id", engine.NewID(engine.PrefixJournal, srv.Engine.Now()))
	if p := o.post("/console/balance/adjust", forged); p.status != http.StatusForbidden {
		t.Errorf("a journal ID the page did not give: %d, want 403", p.status)
	}
	if n := adjustments(t, srv, org.ID); n != 0 {
		t.Fatalf("refused forms made %d adjustments", n)
	}

	// The same form, sent by eight goroutines at once.
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = o.post("/console/balance/adjust", clone(form)).status
		}()
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusSeeOther {
			t.Errorf("send %d: %d, want 303", i, st)
		}
	}
	if n := adjustments(t, srv, org.ID); n != 1 {
		t.Fatalf("one form made %d adjustments", n)
	}
	bal, _ := srv.Engine.GetBalance(context.Background(), org.ID)
	if bal.Available.String() != "250" {
		t.Errorf("available %s, want 250", bal.Available)
	}
	es, _ := srv.Engine.ListAudit(context.Background(), org.ID, 0)
	found := 0
	for _, e := range es {
		if e.Action == engine.AuditBalanceAdjust && e.Actor == "console:owner@example.com" && e.Details["reason"] == "opening float" {
			found++
		}
	}
	if found != 1 {
		t.Errorf("%d audit entries of the adjustment by the owner, want 1", found)
	}
	// A debit beyond the balance is said beside the amount, what was typed kept.
	debit := adjustFields(t, o)
	debit.Set("direction", "debit")
	debit.Set("amount", "9999")
	if p := o.post("/console/balance/adjust", debit); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="amount-error"`) || !strings.Contains(p.body, `value="9999"`) {
		t.Errorf("a debit beyond the balance: %d", p.status)
	}
}

// TestExportDownload: a viewer downloads the organization's deposits as
// CSV, a merchant's formula quoted, and as JSON lines; another
// organization's rows are never in it.
func TestExportDownload(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	other := srv.NewOrg(engine.OrganizationSettings{})
	for _, c := range []struct{ org, merchant string }{{org.ID, "=HYPERLINK(\"http://evil\")"}, {other.ID, "other-org-order"}} {
		if _, _, err := srv.Engine.CreateDeposit(ctx, engine.CreateDepositParams{OrganizationID: c.org, Amount: "500", PaymentMethod: "bkash",
			RedirectURL: "https://shop.example/back", MerchantID: c.merchant}); err != nil {
			t.Fatal(err)
		}
	}
	operator(t, srv, "v@example.com", engine.RoleViewer, org.ID, false)
	b := newBrowser(t, srv)
	b.login("v@example.com", "")
	p := b.get("/console/exports/deposits?format=csv")
	if p.status != http.StatusOK || !strings.HasPrefix(p.header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(p.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("CSV: %d %v", p.status, p.header)
	}
	if !strings.Contains(p.body, `"'=HYPERLINK(""http://evil"")"`) || strings.Contains(p.body, "other-org-order") {
		t.Errorf("CSV body:\n%s", p.body)
	}
	if p := b.get("/console/exports/deposits?format=jsonl"); p.status != http.StatusOK || !strings.Contains(p.body, `"merchant_id":"=HYPERLINK`) {
		t.Errorf("JSONL: %d\n%s", p.status, p.body)
	}
	if p := b.get("/console/exports/secrets"); p.status != http.StatusNotFound {
		t.Errorf("an unknown export: %d", p.status)
	}
}
