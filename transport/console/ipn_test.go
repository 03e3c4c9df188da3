package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

// TestIPNRedeliverInTheConsole: an organization's finished UddoktaPay IPNs
// are listed beside its webhooks, and an operator sends one again
// (audited). Another organization's IPN cannot be named, a viewer cannot
// send, and a POST without the session's CSRF token changes nothing.
func TestIPNRedeliverInTheConsole(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.srv.Engine.Now()
	epoch := time.Unix(0, 0).UTC()
	ipnOf := func(org, id string) {
		err := f.srv.Config.Store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			c := tx.Console()
			if err := c.CreatePaymentLink(ctx, &engine.PaymentLink{ID: id, OrganizationID: org, Amount: decimal.RequireFromString("150"),
				Token: "tok" + id, CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
			if err := c.CreateCompatInvoice(ctx, &engine.CompatInvoice{LinkID: id, OrganizationID: org, Metadata: []byte("{}"),
				RedirectURL: "https://shop.example/", ReturnType: "GET", CancelURL: "https://shop.example/",
				WebhookURL: "https://shop.example/ipn", CreatedAt: now}); err != nil {
				return err
			}
			return c.CreateCompatIPN(ctx, &engine.CompatIPN{LinkID: id, OrganizationID: org, Status: engine.DeliveryExhausted,
				Attempts: 9, NextAttemptAt: now, LeasedUntil: epoch, LastStatusCode: 503, LastError: "HTTP 503", CreatedAt: now, UpdatedAt: now})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ipnOf(f.orgA.ID, "plink_mine")
	ipnOf(f.orgB.ID, "plink_theirs")
	status := func(link string) string {
		var ipn *engine.CompatIPN
		err := f.srv.Config.Store.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) (err error) {
			ipn, err = tx.Console().GetCompatIPN(ctx, link)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ipn.Status, " ", ipn.Attempts)
	}

	operator(t, f.srv, "viewer@example.com", engine.RoleViewer, f.orgA.ID, false)
	v := newBrowser(t, f.srv)
	v.login("viewer@example.com", "")
	if p := v.get("/console/webhooks"); !strings.Contains(p.body, `id="ipn-plink_mine"`) || strings.Contains(p.body, "plink_theirs") {
		t.Fatalf("the viewer's webhooks page: the organization's IPN listed %v, another's %v",
			strings.Contains(p.body, `id="ipn-plink_mine"`), strings.Contains(p.body, "plink_theirs"))
	} else if strings.Contains(p.body, `id="ipn-redeliver-plink_mine"`) {
		t.Error("a viewer is offered to send an IPN again")
	}
	if p := v.post("/console/ipns/plink_mine/redeliver", nil); p.status != http.StatusForbidden {
		t.Errorf("a viewer sending an IPN again: %d, want 403", p.status)
	}

	operator(t, f.srv, "op@example.com", engine.RoleOperator, f.orgA.ID, false)
	a := newBrowser(t, f.srv)
	a.login("op@example.com", "")
	if p := a.get("/console/webhooks"); !strings.Contains(p.body, `id="ipn-redeliver-plink_mine"`) {
		t.Fatal("the operator is not offered to send the IPN again")
	}
	if p := a.post("/console/ipns/plink_theirs/redeliver", nil); p.status != http.StatusNotFound {
		t.Errorf("another organization's IPN: %d, want 404", p.status)
	}
	if p := a.post("/console/ipns/plink_mine/redeliver", url.Values{"csrf": {""}}); p.status != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d, want 403", p.status)
	}
	if got := status("plink_theirs") + " / " + status("plink_mine"); got != "exhausted 9 / exhausted 9" {
		t.Fatalf("refused requests changed IPNs: %s", got)
	}
	if p := a.post("/console/ipns/plink_mine/redeliver", nil); p.status != http.StatusSeeOther {
		t.Fatalf("redeliver: %d %s", p.status, p.body)
	}
	if got := status("plink_mine"); got != "pending 0" {
		t.Errorf("after redeliver: %s, want pending 0", got)
	}
	es, _ := f.srv.Engine.ListAudit(ctx, f.orgA.ID, 0)
	found := false
	for _, e := range es {
		found = found || e.Action == engine.AuditCompatIPNRedeliver && e.Subject == "plink_mine" && e.Actor == "console:op@example.com"
	}
	if !found {
		t.Error("the redelivery is not audited with the operator as actor")
	}
}
