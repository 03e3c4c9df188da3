package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeMetricsAddr: PAYD_METRICS_ADDR (as --metrics-addr) makes payd
// serve /metrics, /healthz and /readyz on a listener apart from the API,
// which does not serve them; PAYD_LEDGER_CHECK_INTERVAL (as
// --ledger-check-interval) runs the ledger check that /metrics reports.
func TestServeMetricsAddr(t *testing.T) {
	t.Setenv("PAYD_METRICS_ADDR", "127.0.0.1:0")
	t.Setenv("PAYD_LEDGER_CHECK_INTERVAL", "10ms")
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "payd.db"))
	var ops string
	for deadline := time.Now().Add(10 * time.Second); ops == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sc := bufio.NewScanner(strings.NewReader(s.log.String()))
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "operations listening" {
				ops, _ = rec["addr"].(string)
			}
		}
	}
	if ops == "" {
		t.Fatalf("no operations listener:\n%s", s.log)
	}
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get("http://" + ops + path); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if code, body := get("http://" + ops + "/metrics"); code != http.StatusOK || !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics: %d %.200s", code, body)
	}
	checked := false
	for deadline := time.Now().Add(10 * time.Second); !checked && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, body := get("http://" + ops + "/metrics")
		checked = strings.Contains(body, "\npayd_ledger_check_differences 0\n")
	}
	if !checked {
		t.Error("/metrics never reported a ledger check")
	}
	api, _ := s.startup["addr"].(string)
	if code, _ := get("http://" + api + "/metrics"); code != http.StatusNotFound {
		t.Errorf("the API's /metrics: %d, want 404", code)
	}
}
