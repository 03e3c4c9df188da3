package console_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/bkash/bkashsim"
	"github.com/payd-engine/payd/provider/sandbox"
)

// The merchant's credentials at the simulator; the secret and password are
// looked for in every page, log line and audit entry.
var bkApp = bkashsim.App{AppKey: "console-app", AppSecret: "APP-SECRET-c0ns0le", Username: "console-user",
	Password: "PASSWORD-c0ns0le-pw", ShortCode: "01811111111"}

// withBkash makes the provider bKash's API with a sandbox behind it, on
// the server's store (its migration line applied), logging into logs.
func withBkash(logs *paydtest.SyncBuffer) paydtest.Option {
	return func(c *payd.Config) {
		m, ok := c.Store.(interface {
			Migrate(context.Context, ...engine.MigrationLine) ([]engine.MigrationVersion, error)
		})
		if !ok {
			panic("the store does not migrate")
		}
		if _, err := m.Migrate(context.Background(), bkash.Migrations()); err != nil {
			panic(err)
		}
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		sb, err := sandbox.New(sandbox.Config{Clock: c.Clock})
		if err != nil {
			panic(err)
		}
		p, err := bkash.New(bkash.Config{Keyring: c.Keyring, Fallback: sb, Clock: c.Clock, Logger: c.Logger})
		if err != nil {
			panic(err)
		}
		c.Provider = p
	}
}

func bkashForm(base string) url.Values {
	return url.Values{"app_key": {bkApp.AppKey}, "app_secret": {bkApp.AppSecret}, "username": {bkApp.Username},
		"password": {bkApp.Password}, "base_url": {base}}
}

func bkashConnected(t *testing.T, srv *paydtest.Server, orgID string) bool {
	t.Helper()
	ok, err := srv.App.Provider.(*bkash.Provider).Connected(context.Background(), orgID)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestBkashConsoleRoles: only an owner connects or disconnects bKash: an
// operator's and a viewer's POST are 403 and change nothing, and are not
// offered the form; another organization's owner cannot reach this one.
func TestBkashConsoleRoles(t *testing.T) {
	sim := bkashsim.New(nil)
	defer sim.Close()
	sim.AddApp(bkApp)
	var logs paydtest.SyncBuffer
	srv := paydtest.MustOpen(t, withBkash(&logs))
	org := srv.NewOrg(engine.OrganizationSettings{})
	other := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "owner@example.com", engine.RoleOwner, org.ID, false)
	operator(t, srv, "op@example.com", engine.RoleOperator, org.ID, false)
	operator(t, srv, "viewer@example.com", engine.RoleViewer, org.ID, false)
	operator(t, srv, "owner@other.example", engine.RoleOwner, other.ID, false)

	for _, email := range []string{"op@example.com", "viewer@example.com"} {
		b := newBrowser(t, srv)
		b.login(email, "")
		if p := b.get("/console/keys"); p.status != http.StatusOK || strings.Contains(p.body, `id="bkash-connect"`) || !strings.Contains(p.body, `id="bkash-off"`) {
			t.Errorf("%s: keys page %d offers the bKash form, or does not say it is off", email, p.status)
		}
		if p := b.post("/console/bkash/connect", bkashForm(sim.BaseURL())); p.status != http.StatusForbidden {
			t.Errorf("%s connecting bKash: %d, want 403", email, p.status)
		}
		if p := b.post("/console/bkash/disconnect", nil); p.status != http.StatusForbidden {
			t.Errorf("%s disconnecting bKash: %d, want 403", email, p.status)
		}
	}
	if bkashConnected(t, srv, org.ID) {
		t.Fatal("an operator's or a viewer's POST connected the organization")
	}

	// Another organization's owner, naming this one, connects only its own.
	stranger := newBrowser(t, srv)
	stranger.login("owner@other.example", "")
	stranger.get("/console/keys")
	p := stranger.post("/console/bkash/connect?org="+org.ID, bkashForm(sim.BaseURL()))
	if bkashConnected(t, srv, org.ID) {
		t.Fatalf("another organization's owner connected this one (%d)", p.status)
	}
	if p.status == http.StatusSeeOther && !bkashConnected(t, srv, other.ID) {
		t.Errorf("the stranger's connect answered %d yet connected nothing", p.status)
	}

	owner := newBrowser(t, srv)
	owner.login("owner@example.com", "")
	owner.get("/console/keys")
	if p := owner.post("/console/bkash/connect", nil); p.status != http.StatusBadRequest || bkashConnected(t, srv, org.ID) {
		t.Errorf("an empty connect: %d", p.status)
	}
	owner.get("/console/keys")
	bad := bkashForm("ftp://bkash.example")
	if p := owner.post("/console/bkash/connect", bad); p.status != http.StatusBadRequest || bkashConnected(t, srv, org.ID) {
		t.Errorf("a bad base URL: %d", p.status)
	}
	owner.get("/console/keys")
	form := bkashForm(sim.BaseURL())
	form.Set("csrf", "forged")
	if p := owner.post("/console/bkash/connect", form); p.status != http.StatusForbidden || bkashConnected(t, srv, org.ID) {
		t.Errorf("a forged CSRF token: %d", p.status)
	}
	// The stranger's connection is its own: this organization has none to
	// disconnect.
	if p := owner.post("/console/bkash/disconnect", nil); p.status != http.StatusNotFound {
		t.Errorf("disconnecting an unconnected organization: %d, want 404", p.status)
	}
}

// TestBkashConsoleConnect: an owner connects the organization from the
// console; the page shows it connected and its base URL; a bkash redirect
// deposit is then paid on bKash's page (the simulator) end to end; the
// owner disconnects. The secret and password appear in no page, log line
// or audit entry, and each change is audited with the owner as actor.
func TestBkashConsoleConnect(t *testing.T) {
	var logs paydtest.SyncBuffer
	srv := paydtest.MustOpen(t, withBkash(&logs))
	sim := bkashsim.New(srv.Clock) // bKash's times in the engine's payment window
	defer sim.Close()
	sim.AddApp(bkApp)
	org := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "owner@example.com", engine.RoleOwner, org.ID, false)
	owner := newBrowser(t, srv)
	owner.login("owner@example.com", "")
	var pages []string
	p := owner.get("/console/keys")
	pages = append(pages, p.body)
	if !strings.Contains(p.body, `id="bkash-connect"`) || !strings.Contains(p.body, `id="bkash-off"`) {
		t.Fatal("the owner is not offered the bKash form")
	}
	p = owner.post("/console/bkash/connect", bkashForm(sim.BaseURL()))
	if p.status != http.StatusSeeOther {
		t.Fatalf("connect: %d %s", p.status, p.body)
	}
	if !bkashConnected(t, srv, org.ID) {
		t.Fatal("not connected")
	}
	p = owner.get("/console/keys?done=done_bkash_connect")
	pages = append(pages, p.body)
	if !strings.Contains(p.body, `id="bkash-connected"`) || !strings.Contains(p.body, sim.BaseURL()) {
		t.Error("the page does not show the connection and its base URL")
	}

	// A bkash redirect deposit pays through the simulator.
	res := srv.Do(org, paydtest.Request{Body: paydtest.Redirect(), APIKey: org.APIKey, Sign: true})
	checkout := paydtest.Str(res.JSON, "redirect_url")
	if res.Status != http.StatusOK || !strings.HasPrefix(checkout, sim.URL+"/pay?") {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id := paydtest.Str(res.JSON, "id")
	u, _ := url.Parse(checkout)
	cb, err := sim.Approve(u.Query().Get("paymentID"), "01712345678")
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(cb)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: %d", resp.StatusCode)
	}
	srv.Work() // the engine applies the executed payment
	if g := srv.GetDeposit(org, id, true); paydtest.Str(g.JSON, "status") != "succeeded" {
		t.Fatalf("deposit: %s", g.Body)
	}
	p = owner.get("/console/deposits/" + id)
	pages = append(pages, p.body)

	p = owner.post("/console/bkash/disconnect", nil)
	if p.status != http.StatusSeeOther || bkashConnected(t, srv, org.ID) {
		t.Fatalf("disconnect: %d", p.status)
	}
	p = owner.get("/console/keys")
	pages = append(pages, p.body)
	if !strings.Contains(p.body, `id="bkash-off"`) {
		t.Error("the page does not say it is disconnected")
	}
	p = owner.get("/console/audit")
	pages = append(pages, p.body)

	es, err := srv.Engine.ListAudit(context.Background(), org.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range es {
		if e.Action == bkash.AuditConnect || e.Action == bkash.AuditDisconnect {
			seen[e.Action] = true
			if e.Actor != "console:owner@example.com" || e.Subject != org.ID {
				t.Errorf("%s by %q of %q", e.Action, e.Actor, e.Subject)
			}
		}
		for k, v := range e.Details {
			if strings.Contains(v, bkApp.AppSecret) || strings.Contains(v, bkApp.Password) {
				t.Errorf("audit %s detail %s holds a credential", e.Action, k)
			}
		}
	}
	if !seen[bkash.AuditConnect] || !seen[bkash.AuditDisconnect] {
		t.Errorf("audited %v, want connect and disconnect", seen)
	}
	for i, body := range pages {
		if strings.Contains(body, bkApp.AppSecret) || strings.Contains(body, bkApp.Password) {
			t.Errorf("page %d shows a credential", i)
		}
	}
	if l := logs.String(); strings.Contains(l, bkApp.AppSecret) || strings.Contains(l, bkApp.Password) {
		t.Error("a log line holds a credential")
	}
}
