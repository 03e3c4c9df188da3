package payd_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport"
)

// TestMetricsReportDisabledEndpoints: the gauge is the number of endpoints
// disabled now, down again when an operator enables one, while the
// counter keeps how many this process disabled.
func TestMetricsReportDisabledEndpoints(t *testing.T) {
	ctx := context.Background()
	s := paydtest.MustOpen(t, func(c *payd.Config) { c.Webhooks = transport.NewWebhookClient(true) })
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }))
	defer gone.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	org := s.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	other := s.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	var goneIDs []string
	for _, o := range []*paydtest.Org{org, other} {
		s.Fund(o, "10000")
		ep, _, err := s.Engine.AddWebhookEndpoint(ctx, o.ID, gone.URL+"/hook")
		if err != nil {
			t.Fatal(err)
		}
		goneIDs = append(goneIDs, ep.ID)
		if _, _, err := s.Engine.AddWebhookEndpoint(ctx, o.ID, ok.URL+"/hook"); err != nil {
			t.Fatal(err)
		}
	}
	families := scrape(t, s)
	if got := gaugeValue(t, families, "payd_webhook_endpoints_disabled", nil); got != 0 {
		t.Errorf("disabled before any post: %v", got)
	}

	for _, o := range []*paydtest.Org{org, other} {
		if res := s.Do(o, paydtest.Request{Path: "/api/v1/withdraws", APIKey: o.APIKey, Body: paydtest.Withdrawal()}); res.Status != http.StatusCreated {
			t.Fatalf("withdraw: %d %s", res.Status, res.Body)
		}
	}
	if _, err := s.Engine.DeliverWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	families = scrape(t, s)
	if got := gaugeValue(t, families, "payd_webhook_endpoints_disabled", nil); got != 2 {
		t.Errorf("disabled after two answered 410: %v, want 2", got)
	}
	if got := counterValue(families, "payd_webhook_endpoints_disabled_total", nil); got != 2 {
		t.Errorf("disabled total: %v, want 2", got)
	}

	if _, err := s.Engine.EnableWebhookEndpoint(ctx, goneIDs[0]); err != nil {
		t.Fatal(err)
	}
	families = scrape(t, s)
	if got := gaugeValue(t, families, "payd_webhook_endpoints_disabled", nil); got != 1 {
		t.Errorf("disabled after the operator enabled one: %v, want 1", got)
	}
	if got := counterValue(families, "payd_webhook_endpoints_disabled_total", nil); got != 2 {
		t.Errorf("disabled total after enabling: %v, want still 2", got)
	}
}
