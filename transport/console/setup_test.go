package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport"
)

// TestWalletAddInTheBrowser: an operator adds a wallet, audited; a viewer
// and a POST without the session's CSRF token are refused and add none; a
// bad number is said beside the field with what was typed kept.
func TestWalletAddInTheBrowser(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "v@example.com", engine.RoleViewer, org.ID, false)
	operator(t, srv, "o@example.com", engine.RoleOperator, org.ID, false)
	form := url.Values{"channel": {"bkash"}, "operation": {"cash_out"}, "phone": {"01711000009"}, "name": {"Agent Karim"}, "max_amount": {"20000"}}
	v := newBrowser(t, srv)
	v.login("v@example.com", "")
	if p := v.post("/console/wallets", clone(form)); p.status != http.StatusForbidden {
		t.Errorf("a viewer adding a wallet: %d, want 403", p.status)
	}
	o := newBrowser(t, srv)
	o.login("o@example.com", "")
	noCSRF := clone(form)
	noCSRF.Set("csrf", "")
	if p := o.post("/console/wallets", noCSRF); p.status != http.StatusForbidden {
		t.Errorf("without a CSRF token: %d, want 403", p.status)
	}
	if ws, _ := srv.Engine.ListWallets(ctx, org.ID); len(ws) != 0 {
		t.Fatalf("refused requests added %d wallets", len(ws))
	}
	bad := clone(form)
	bad.Set("phone", "12345")
	if p := o.post("/console/wallets", bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="phone-error"`) || !strings.Contains(p.body, `value="12345"`) {
		t.Errorf("a bad number: %d", p.status)
	}
	if p := o.post("/console/wallets", clone(form)); p.status != http.StatusSeeOther {
		t.Fatalf("add: %d %s", p.status, p.body)
	}
	ws, _ := srv.Engine.ListWallets(ctx, org.ID)
	if len(ws) != 1 || ws[0].Phone != "01711000009" || ws[0].MaxAmount.Decimal.String() != "20000" {
		t.Fatalf("wallets: %+v", ws)
	}
	es, _ := srv.Engine.ListAudit(ctx, org.ID, 0)
	found := false
	for _, e := range es {
		found = found || e.Action == engine.AuditWalletAdd && e.Actor == "console:o@example.com"
	}
	if !found {
		t.Error("no wallet.add audit entry by the operator")
	}
}

// TestWebhookTestDelivery: an operator sends an endpoint a signed test
// event and sees its answer; another organization's endpoint is not
// found; a viewer is refused; only the owner removes an endpoint.
func TestWebhookTestDelivery(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var got []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Header.Get("webhook-signature")+" "+string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	// The receiver is on loopback, which the default client refuses
	// (a test post is no way around the guard): this payd allows it.
	srv := paydtest.MustOpen(t, paydtest.WithWebhooks(transport.NewWebhookClient(true)))
	org := srv.NewOrg(engine.OrganizationSettings{})
	other := srv.NewOrg(engine.OrganizationSettings{})
	ep, _, err := srv.Engine.AddWebhookEndpoint(ctx, org.ID, recv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	otherEP, _, err := srv.Engine.AddWebhookEndpoint(ctx, other.ID, recv.URL+"/other")
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator, engine.RoleOwner} {
		operator(t, srv, role+"@example.com", role, org.ID, false)
	}
	v := newBrowser(t, srv)
	v.login("viewer@example.com", "")
	if p := v.post("/console/webhooks/"+ep.ID+"/test", nil); p.status != http.StatusForbidden {
		t.Errorf("a viewer's test: %d, want 403", p.status)
	}
	o := newBrowser(t, srv)
	o.login("operator@example.com", "")
	if p := o.post("/console/webhooks/"+otherEP.ID+"/test", nil); p.status != http.StatusNotFound {
		t.Errorf("testing another organization's endpoint: %d, want 404", p.status)
	}
	if p := o.post("/console/webhooks/"+ep.ID+"/remove", nil); p.status != http.StatusForbidden {
		t.Errorf("an operator removing an endpoint: %d, want 403", p.status)
	}
	mu.Lock()
	if len(got) != 0 {
		t.Fatalf("refused tests posted %d times", len(got))
	}
	mu.Unlock()
	p := o.post("/console/webhooks/"+ep.ID+"/test", nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="test-result"`) || !strings.Contains(p.body, "HTTP 204") {
		t.Fatalf("test: %d %s", p.status, p.body[strings.Index(p.body, "<main>"):])
	}
	mu.Lock()
	if len(got) != 1 || !strings.HasPrefix(got[0], "v1,") || !strings.Contains(got[0], `"type":"webhook.test"`) {
		t.Errorf("the receiver got %q", got)
	}
	mu.Unlock()
	owner := newBrowser(t, srv)
	owner.login("owner@example.com", "")
	if p := owner.post("/console/webhooks/"+otherEP.ID+"/remove", nil); p.status != http.StatusNotFound {
		t.Errorf("removing another organization's endpoint: %d, want 404", p.status)
	}
	if p := owner.post("/console/webhooks/"+ep.ID+"/remove", nil); p.status != http.StatusSeeOther {
		t.Errorf("remove: %d", p.status)
	}
	if eps, _ := srv.Engine.ListWebhookEndpoints(ctx, other.ID); len(eps) != 1 {
		t.Error("the other organization's endpoint is gone")
	}
}

// TestSettingsInTheBrowser: an organization's owner sets what payers see
// and the windows, audited, and the payer's pages show the name, logo
// (its origin, and no other, allowed by the CSP) and support contact; the
// fees are the platform's: an organization's owner who posts fee fields
// changes no fee (the attack), a platform owner does; a viewer and an
// operator are refused, and so is a POST without the CSRF token; a
// script URL for the logo is refused beside the field.
func TestSettingsInTheBrowser(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{Name: ptr("Old Name"), DepositFeePercent: ptr(decimal.RequireFromString("1.5"))})
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator, engine.RoleOwner} {
		operator(t, srv, role+"@example.com", role, org.ID, false)
	}
	operator(t, srv, "platform@example.com", engine.RoleOwner, "", false)
	form := url.Values{"name": {"Dhaka Books"}, "logo_url": {"https://cdn.dhakabooks.example/logo.png"}, "support_contact": {"01711000000"},
		"instructions_window": {"30"}, "redirect_window": {"45"},
		"deposit_fee_percent": {"0"}, "deposit_fee_fixed": {"0"}, "withdraw_commission_percent": {"0"}, "withdraw_commission_fixed": {"0"},
		"deposits_enabled": {"on"}, "withdrawals_enabled": {"on"}, "h2h_enabled": {"on"}}
	// Every method on but UPI.
	for _, m := range engine.Methods() {
		if m.IsDeposit() && m.Name != "upi" {
			form.Set("method_"+m.Name, "on")
		}
	}
	before, _ := srv.Engine.GetOrganization(ctx, org.ID)
	for _, role := range []string{engine.RoleViewer, engine.RoleOperator} {
		b := newBrowser(t, srv)
		b.login(role+"@example.com", "")
		if p := b.post("/console/settings", clone(form)); p.status != http.StatusForbidden {
			t.Errorf("%s saving settings: %d, want 403", role, p.status)
		}
	}
	o := newBrowser(t, srv)
	o.login("owner@example.com", "")
	noCSRF := clone(form)
	noCSRF.Set("csrf", "")
	if p := o.post("/console/settings", noCSRF); p.status != http.StatusForbidden {
		t.Errorf("without a CSRF token: %d, want 403", p.status)
	}
	if got, _ := srv.Engine.GetOrganization(ctx, org.ID); got.Name != "Old Name" {
		t.Fatalf("a refused request renamed the organization: %q", got.Name)
	}
	// A script URL, and a host that would add a directive to the payer
	// pages' Content-Security-Policy, are refused.
	for _, logo := range []string{"javascript:alert(1)", "https://cdn.example;script-src/logo.png", "https://cdn.example,evil.example/x.png", "http://cdn.example/logo.png"} {
		bad := clone(form)
		bad.Set("logo_url", logo)
		if p := o.post("/console/settings", bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="logo_url-error"`) {
			t.Errorf("logo %q: %d", logo, p.status)
		}
	}
	if p := o.post("/console/settings", clone(form)); p.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.status, p.body)
	}
	got, _ := srv.Engine.GetOrganization(ctx, org.ID)
	if got.Name != "Dhaka Books" || got.LogoURL != "https://cdn.dhakabooks.example/logo.png" || got.SupportContact != "01711000000" ||
		got.InstructionsWindow != 30*time.Minute || got.RedirectWindow != 45*time.Minute {
		t.Errorf("after the owner's save: %+v", got)
	}
	if !got.DepositFeePercent.Equal(before.DepositFeePercent) || !got.WithdrawCommissionFixed.Equal(before.WithdrawCommissionFixed) ||
		got.H2HEnabled != before.H2HEnabled || got.WithdrawalsEnabled != before.WithdrawalsEnabled {
		t.Errorf("an organization's owner changed the platform's settings: %+v, were %+v", got, before)
	}
	es, _ := srv.Engine.ListAudit(ctx, org.ID, 0)
	audited := false
	for _, e := range es {
		audited = audited || e.Action == engine.AuditOrgUpdate && e.Actor == "console:owner@example.com" && e.Details["logo_url"] != ""
	}
	if !audited {
		t.Error("no org.update audit entry by the owner")
	}
	if got.MethodEnabled("upi") || !got.MethodEnabled("bkash") {
		t.Errorf("methods turned off: %v", got.DisabledMethods)
	}
	// The API refuses a method turned off (the attack: a merchant's
	// server, or a forged request, naming it anyway).
	if _, _, err := srv.Engine.CreateDeposit(ctx, engine.CreateDepositParams{OrganizationID: org.ID, Amount: "500", PaymentMethod: "upi",
		RedirectURL: "https://shop.example/back", MerchantID: "upi-1"}); engine.ErrorCode(err) != engine.CodeForbidden {
		t.Errorf("a deposit by a method turned off: %v", err)
	}
	l, err := srv.Engine.CreatePaymentLink(ctx, org.ID, "500", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Engine.PayPaymentLink(ctx, engine.PayPaymentLinkParams{Token: l.Token, PaymentMethod: "upi", ReturnURL: srv.URL + "/pay/" + l.Token}); engine.ErrorCode(err) != engine.CodeForbidden {
		t.Errorf("a link paid by a method turned off: %v", err)
	}
	p := newBrowser(t, srv).get("/pay/" + l.Token)
	if strings.Contains(p.body, `id="pay-upi"`) || !strings.Contains(p.body, `id="pay-bkash"`) {
		t.Error("the pay page offers a method turned off, or not one turned on")
	}
	if !strings.Contains(p.body, `id="shop-logo"`) || !strings.Contains(p.body, `id="shop-support"`) ||
		!strings.Contains(p.header.Get("Content-Security-Policy"), "img-src 'self' https://cdn.dhakabooks.example;") {
		t.Errorf("the pay page: logo %v, support %v, CSP %q", strings.Contains(p.body, `id="shop-logo"`), strings.Contains(p.body, `id="shop-support"`), p.header.Get("Content-Security-Policy"))
	}

	pl := newBrowser(t, srv)
	pl.login("platform@example.com", "")
	if p := pl.post("/console/settings?org="+org.ID, clone(form)); p.status != http.StatusSeeOther {
		t.Fatalf("the platform owner's save: %d", p.status)
	}
	if got, _ := srv.Engine.GetOrganization(ctx, org.ID); !got.DepositFeePercent.IsZero() || !got.H2HEnabled {
		t.Errorf("the platform owner's fees: %s, h2h %v", got.DepositFeePercent, got.H2HEnabled)
	}
}

// TestPairAPhone: the owner pairs a phone to the organization's wallet:
// its token is shown once, with a QR code of the forwarder URL and token,
// audited; the token works at the forwarder URL's endpoint. An operator
// and a POST without the CSRF token are refused, and so is naming another
// organization's wallet (the phone would prove that organization's
// payments).
func TestPairAPhone(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t, paydtest.WithSMSInbox(smsinbox.Config{}))
	org := srv.NewOrg(engine.OrganizationSettings{})
	other := srv.NewOrg(engine.OrganizationSettings{})
	w := srv.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	wOther := srv.AddWallet(other, "bkash", "cash_out", "01822222222", "Other agent")
	operator(t, srv, "operator@example.com", engine.RoleOperator, org.ID, false)
	operator(t, srv, "owner@example.com", engine.RoleOwner, org.ID, false)
	devices := func() int {
		ds, err := srv.Inbox.ListDevices(ctx, org.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	form := url.Values{"name": {"counter 1"}, "wallet": {w.ID}}
	op := newBrowser(t, srv)
	op.login("operator@example.com", "")
	if p := op.post("/console/devices", clone(form)); p.status != http.StatusForbidden {
		t.Errorf("an operator pairing: %d, want 403", p.status)
	}
	o := newBrowser(t, srv)
	o.login("owner@example.com", "")
	noCSRF := clone(form)
	noCSRF.Set("csrf", "")
	if p := o.post("/console/devices", noCSRF); p.status != http.StatusForbidden {
		t.Errorf("without a CSRF token: %d, want 403", p.status)
	}
	if p := o.post("/console/devices", url.Values{"name": {"thief"}, "wallet": {wOther.ID}}); p.status < 400 {
		t.Errorf("pairing to another organization's wallet: %d", p.status)
	}
	if n := devices(); n != 0 {
		t.Fatalf("refused requests paired %d phones", n)
	}
	p := o.post("/console/devices", clone(form))
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="pair-qr"`) || !strings.Contains(p.body, `id="device-token"`) {
		t.Fatalf("pair: %d", p.status)
	}
	token := between(p.body, `id="device-token">`, "<")
	if !strings.Contains(p.body, `id="forwarder-url">`+srv.URL+"/api/v1/devices/sms<") {
		t.Errorf("the forwarder URL shown: %q", between(p.body, `id="forwarder-url">`, "<"))
	}
	if n := devices(); n != 1 {
		t.Fatalf("devices: %d", n)
	}
	if p := o.get("/console/devices"); strings.Contains(p.body, token) {
		t.Error("the token is shown again")
	}
	// The token is the phone's: its heartbeat is accepted.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/devices/heartbeat", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		t.Errorf("the paired phone's heartbeat: %d", res.StatusCode)
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

// TestCreateOrganization: a platform owner creates an organization from
// the browser, its first API key shown once, audited; an organization's
// owner (who would make a second organization of its own) and a platform
// viewer are refused, and so is a POST without the CSRF token.
func TestCreateOrganization(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "owner@example.com", engine.RoleOwner, org.ID, false)
	operator(t, srv, "pviewer@example.com", engine.RoleViewer, "", false)
	operator(t, srv, "powner@example.com", engine.RoleOwner, "", false)
	count := func() int {
		os, err := srv.Engine.ListOrganizations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(os)
	}
	n0 := count()
	for _, email := range []string{"owner@example.com", "pviewer@example.com"} {
		b := newBrowser(t, srv)
		b.login(email, "")
		if p := b.post("/console/organizations", url.Values{"name": {"Mine"}}); p.status != http.StatusForbidden {
			t.Errorf("%s creating an organization: %d, want 403", email, p.status)
		}
	}
	p := newBrowser(t, srv)
	p.login("powner@example.com", "")
	if pg := p.post("/console/organizations", url.Values{"name": {"Mine"}, "csrf": {""}}); pg.status != http.StatusForbidden {
		t.Errorf("without a CSRF token: %d, want 403", pg.status)
	}
	if n := count(); n != n0 {
		t.Fatalf("refused requests made %d organizations", n-n0)
	}
	pg := p.post("/console/organizations", url.Values{"name": {"Dhaka Books"}})
	if pg.status != http.StatusOK || !strings.Contains(pg.body, `id="new-key"`) {
		t.Fatalf("create: %d", pg.status)
	}
	if n := count(); n != n0+1 {
		t.Fatalf("organizations: %d, want %d", n, n0+1)
	}
}

// TestSigningSecretRotation: the owner gives a key a new signing secret,
// shown once and audited; an operator, another organization's key and a
// POST without the CSRF token are refused.
func TestSigningSecretRotation(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	other := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "operator@example.com", engine.RoleOperator, org.ID, false)
	operator(t, srv, "owner@example.com", engine.RoleOwner, org.ID, false)
	rotations := func() int {
		es, _ := srv.Engine.ListAudit(ctx, org.ID, 0)
		n := 0
		for _, e := range es {
			if e.Action == engine.AuditSigningSecretRotate {
				n++
			}
		}
		return n
	}
	op := newBrowser(t, srv)
	op.login("operator@example.com", "")
	if p := op.post("/console/keys/"+org.KeyID+"/secret", nil); p.status != http.StatusForbidden {
		t.Errorf("an operator: %d, want 403", p.status)
	}
	o := newBrowser(t, srv)
	o.login("owner@example.com", "")
	if p := o.post("/console/keys/"+other.KeyID+"/secret", nil); p.status != http.StatusNotFound {
		t.Errorf("another organization's key: %d, want 404", p.status)
	}
	if p := o.post("/console/keys/"+org.KeyID+"/secret", url.Values{"csrf": {""}}); p.status != http.StatusForbidden {
		t.Errorf("without a CSRF token: %d, want 403", p.status)
	}
	if n := rotations(); n != 0 {
		t.Fatalf("refused requests rotated %d times", n)
	}
	if p := o.post("/console/keys/"+org.KeyID+"/secret", nil); p.status != http.StatusOK || !strings.Contains(p.body, `id="new-secret"`) {
		t.Fatalf("rotate: %d", p.status)
	}
	if n := rotations(); n != 1 {
		t.Fatalf("rotations audited: %d", n)
	}
}

// TestPayRefusalInPlainWords: a payer posting a method the organization
// turned off gets one plain sentence in their language, not the engine's.
func TestPayRefusalInPlainWords(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	off := []string{"upi"}
	if _, err := srv.Engine.UpdateOrganization(ctx, org.ID, engine.OrganizationSettings{DisabledMethods: &off}); err != nil {
		t.Fatal(err)
	}
	l, err := srv.Engine.CreatePaymentLink(ctx, org.ID, "500", "")
	if err != nil {
		t.Fatal(err)
	}
	payer := newBrowser(t, srv)
	payer.get("/pay/" + l.Token + "?lang=bn")
	p := payer.post("/pay/"+l.Token, url.Values{"method": {"upi"}})
	if p.status < 400 || !strings.Contains(p.body, "অন্য একটি বেছে নিন") || strings.Contains(p.body, "payment_method:") {
		t.Errorf("a method turned off: %d %s", p.status, between(p.body, `id="error">`, "<"))
	}
}
