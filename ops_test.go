package payd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

func ptr[T any](v T) *T { return &v }

func h2hBody(merchantID string) string {
	return `{"amount":"500","payment_method":"bkash_agent","redirect_url":"https://shop.example/return","merchant_id":"` +
		merchantID + `","checkout_mode":"h2h","payer":{"phone":"01712345678"}}`
}

// scrape reads s's /metrics with the Prometheus text parser.
func scrape(t *testing.T, s *paydtest.Server) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(s.OpsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// series finds the one metric of a family with exactly these labels.
func series(families map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		return m
	}
	return nil
}

func counterValue(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := series(families, name, labels)
	if m == nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func TestMetricsCountRequestsByRoutePattern(t *testing.T) {
	s := paydtest.MustRunMain(t)
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")

	var ids []string
	for _, mid := range []string{"m1", "m2"} {
		res := s.CreateH2H(org, h2hBody(mid))
		if res.Status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", mid, res.Status, res.Body)
		}
		ids = append(ids, paydtest.Str(res.JSON, "id"))
	}
	for _, id := range ids {
		if res := s.GetDeposit(org, id, true); res.Status != http.StatusOK {
			t.Fatalf("get: %d %s", res.Status, res.Body)
		}
	}
	if res := s.GetDeposit(org, "dep_nosuch", true); res.Status != http.StatusNotFound {
		t.Fatalf("get missing: %d", res.Status)
	}
	if res := s.Do(org, paydtest.Request{Method: "BREW", Path: "/api/v1/balance", APIKey: org.APIKey}); res.Status != http.StatusMethodNotAllowed {
		t.Fatalf("BREW: %d", res.Status)
	}
	for _, path := range []string{"/api/v1/nosuch", "/nosuch", "/api/v1//deposits"} {
		if res := s.Do(org, paydtest.Request{Method: http.MethodGet, Path: path}); res.Status != http.StatusNotFound {
			t.Fatalf("GET %s: %d", path, res.Status)
		}
	}

	families := scrape(t, s)
	want := []struct {
		route, method, status string
		n                     float64
	}{
		{"/v1/deposits", "POST", "201", 2},
		{"/v1/deposits/{id}", "GET", "200", 2},
		{"/v1/deposits/{id}", "GET", "404", 1},
		{"/v1/balance", "other", "405", 1},
		{"unmatched", "GET", "404", 3},
	}
	for _, w := range want {
		labels := map[string]string{"route": w.route, "method": w.method, "status": w.status}
		if got := counterValue(families, "payd_http_requests_total", labels); got != w.n {
			t.Errorf("payd_http_requests_total%v = %v, want %v", labels, got, w.n)
		}
		h := series(families, "payd_http_request_duration_seconds", labels)
		if h == nil || h.GetHistogram().GetSampleCount() != uint64(w.n) {
			t.Errorf("payd_http_request_duration_seconds%v: %v, want %v samples", labels, h, w.n)
		}
	}
	// No label value is an ID: the route is the pattern.
	for _, m := range families["payd_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			for _, id := range append(ids, "dep_nosuch") {
				if strings.Contains(l.GetValue(), id) {
					t.Errorf("label %s=%q holds an ID", l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if families[name] == nil {
			t.Errorf("%s missing: the Go runtime and process collectors are not registered", name)
		}
	}
}

// TestMetricsRouteLabelLacksAPIPrefix: the route label is the same
// pattern wherever the API is mounted, so a dashboard does not depend on
// the deployment's prefix.
func TestMetricsRouteLabelLacksAPIPrefix(t *testing.T) {
	for _, prefix := range []string{"/api", "/pay/api", ""} {
		s := paydtest.MustOpen(t, func(c *payd.Config) { c.APIPrefix = prefix })
		for _, path := range []string{"/v1/balance", "/v1/deposits/dep_x", "/v1/nosuch"} {
			if res := s.Do(nil, paydtest.Request{Method: http.MethodGet, Path: prefix + path}); res.Status != http.StatusUnauthorized && res.Status != http.StatusNotFound {
				t.Fatalf("prefix %q: GET %s: %d %s", prefix, path, res.Status, res.Body)
			}
		}
		families := scrape(t, s)
		for _, w := range []struct{ route, status string }{
			{"/v1/balance", "401"}, {"/v1/deposits/{id}", "401"}, {"unmatched", "404"},
		} {
			labels := map[string]string{"route": w.route, "method": "GET", "status": w.status}
			if got := counterValue(families, "payd_http_requests_total", labels); got != 1 {
				t.Errorf("prefix %q: payd_http_requests_total%v = %v, want 1", prefix, labels, got)
			}
		}
		for _, m := range families["payd_http_requests_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && prefix != "" && strings.Contains(l.GetValue(), prefix) {
					t.Errorf("prefix %q: route label %q holds it", prefix, l.GetValue())
				}
			}
		}
	}
}

// syncBuffer is a log sink the server's goroutines write to at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestRequestIDIsAnsweredAndLogged(t *testing.T) {
	var logs syncBuffer
	s := paydtest.MustOpen(t, func(c *payd.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	get := func(id string) string {
		t.Helper()
		req := paydtest.Request{Method: http.MethodGet, Path: "/api/v1/balance", APIKey: org.APIKey, Sign: true}
		if id != "" {
			req.Header = map[string]string{"X-Request-Id": id}
		}
		res := s.Do(org, req)
		if res.Status != http.StatusOK {
			t.Fatalf("balance: %d %s", res.Status, res.Body)
		}
		got := res.Header.Values("X-Request-Id")
		if len(got) != 1 || got[0] == "" {
			t.Fatalf("X-Request-Id %q", got)
		}
		return got[0]
	}
	kept := "req-42.abc_XYZ~"
	if got := get(kept); got != kept {
		t.Errorf("sane client ID %q answered as %q", kept, got)
	}
	generated := get("")
	again := get("")
	if generated == again {
		t.Errorf("two requests without an ID got the same one, %q", generated)
	}
	for _, insane := range []string{"has space", "quote\"d", strings.Repeat("a", 65), "ünïcode", "new\tline"} {
		if got := get(insane); got == insane || !saneID(got) {
			t.Errorf("client ID %q answered as %q, want a generated one", insane, got)
		}
	}
	// An error answer carries one too.
	res := s.Do(org, paydtest.Request{Method: http.MethodGet, Path: "/api/v1/nosuch", Header: map[string]string{"X-Request-Id": "err-1"}})
	if res.Status != http.StatusNotFound || res.Header.Get("X-Request-Id") != "err-1" {
		t.Errorf("404: %d, X-Request-Id %q", res.Status, res.Header.Get("X-Request-Id"))
	}

	byID := map[string]int{}
	for _, l := range logs.lines(t) {
		if l["msg"] != "request" {
			continue
		}
		id, _ := l["request_id"].(string)
		if id == "" {
			t.Errorf("request log line without request_id: %v", l)
		}
		byID[id]++
	}
	for _, id := range []string{kept, generated, again, "err-1"} {
		if byID[id] != 1 {
			t.Errorf("log lines with request_id %q: %d, want 1", id, byID[id])
		}
	}
}

func saneID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c > '~' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestHealthAndReadiness(t *testing.T) {
	s := paydtest.MustOpen(t) // no background work yet
	if code, body := get(t, s.OpsURL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if code, body := get(t, s.OpsURL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "workers") {
		t.Errorf("/readyz without workers: %d %s", code, body)
	}
	s.Run()
	if code, body := get(t, s.OpsURL+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz: %d %s", code, body)
	}
	if err := s.Config.Store.Close(); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, s.OpsURL+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "database") {
		t.Errorf("/readyz with the database closed: %d %s", code, body)
	}
	if code, _ := get(t, s.OpsURL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with the database closed: %d", code)
	}
}
