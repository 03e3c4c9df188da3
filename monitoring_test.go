package payd_test

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// healthStore is a store that keeps a DBHealth, as storage/postgres does:
// payd exports the database-availability series only for such a store.
type healthStore struct{ payd.Store }

func (healthStore) DBHealth() engine.DBHealth { return engine.DBHealth{} }

// exportedMetrics are the names every series payd can export may have,
// read from the descriptors of a sandbox payd's, an SMS inbox payd's and
// (for the Postgres-only series) a payd on a store with DB health's
// registries (a series appears in a scrape only once it has a value).
func exportedMetrics(t *testing.T) map[string]bool {
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{}
	withHealth := func(c *payd.Config) { c.Store = healthStore{c.Store} }
	for _, opts := range [][]paydtest.Option{nil, {paydtest.WithSMSInbox(smsinbox.Config{})}, {withHealth}} {
		s := paydtest.MustOpen(t, opts...)
		ch := make(chan *prometheus.Desc)
		go func() { s.Metrics.Registry.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fqName.FindStringSubmatch(d.String()); m != nil {
				names[m[1]] = true
				// A histogram's series.
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					names[m[1]+suffix] = true
				}
			}
		}
	}
	return names
}

// metricName is an identifier that names one of payd's metrics, or the Go
// runtime's or the process's.
var metricName = regexp.MustCompile(`\b(?:payd|go|process)_[a-z0-9_]+\b`)

// TestMonitoringDocsNameExistingMetrics: every expression of the example
// alerting rules and of the Grafana dashboard names at least one metric,
// and only metrics payd exports, so a renamed metric fails here rather
// than in an operator's silent alert.
func TestMonitoringDocsNameExistingMetrics(t *testing.T) {
	exported := exportedMetrics(t)
	for _, want := range []string{"payd_http_requests_total", "payd_queue_items", "payd_sms_device_silence_seconds", "payd_db_unavailable_seconds", "go_goroutines"} {
		if !exported[want] {
			t.Fatalf("the registry's descriptors lack %s: %v", want, exported)
		}
	}
	var exprs []string
	f, err := os.Open("docs/monitoring/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	alerts := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if e, ok := strings.CutPrefix(line, "expr:"); ok {
			exprs = append(exprs, strings.TrimSpace(e))
		}
		if strings.HasPrefix(line, "- alert:") {
			alerts++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if alerts == 0 || alerts != len(exprs) {
		t.Fatalf("alerts.yml: %d alerts, %d one-line expressions", alerts, len(exprs))
	}
	b, err := os.ReadFile("docs/monitoring/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, e := range exprs {
		names := metricName.FindAllString(e, -1)
		if len(names) == 0 {
			t.Errorf("%q names no metric of payd's", e)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%q names %s, which payd does not export", e, n)
			}
		}
	}
}
