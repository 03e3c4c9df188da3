package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport/webhook"
)

// TestMain lets the test binary stand in for paydbench as the bare
// handler's process.
func TestMain(m *testing.M) {
	if addr := os.Getenv(serveBareEnv); addr != "" {
		serveBare(addr)
		return
	}
	os.Exit(m.Run())
}

// TestSmoke runs every scenario and both baselines briefly against a payd
// built from this tree: CI checks that the tool works, not its figures.
func TestSmoke(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "payd")
	if out, err := exec.Command("go", "build", "-o", bin, "../payd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	err := run(context.Background(), options{
		payd: bin, clients: 2, duration: 300 * time.Millisecond, scenarios: allScenarios, out: &out,
		limits: true, signBare: true, poll: 2 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range append(allScenarios, "store: bare 3-statement tx", "net/http: bare JSON handler", "payd peak RSS", "signed H2H create / bare store transaction", "verify, per deposit: create",
		"by write time per operation", "by CPU per operation", "verify to succeeded / bare store transaction") {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	// The creates wrote; payd's metrics were read around each run.
	if !regexp.MustCompile(`h2h-create +payd \d+ µs, writes [1-9]\d* µs`).MatchString(out.String()) {
		t.Errorf("the report gives no write time of the creates:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

// TestSmokeLists runs the lists scenario at two small counts: the tool
// works, the figures are not checked.
func TestSmokeLists(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "payd")
	if out, err := exec.Command("go", "build", "-o", bin, "../payd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	err := run(context.Background(), options{payd: bin, clients: 1, duration: 400 * time.Millisecond, lists: []int{50, 200}, out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range append(listScenarioNames, "p50 at 200 deposits / p50 at 50 deposits") {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestSmokeWebhook runs verify with -await webhook: every deposit counted
// was woken by a verified deposit.succeeded delivery. The figures are not
// checked.
func TestSmokeWebhook(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "payd")
	if out, err := exec.Command("go", "build", "-o", bin, "../payd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	err := run(context.Background(), options{
		payd: bin, clients: 2, duration: 500 * time.Millisecond, scenarios: []string{"verify"}, out: &out,
		poll: 2 * time.Millisecond, await: "webhook",
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	report := out.String()
	for _, want := range []string{"wait for the deposit.succeeded webhook", "(0.0 reads)", " 0 refused signatures", "verify to succeeded"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "webhooks received: 0 verified") {
		t.Errorf("no deposit was woken by its webhook:\n%s", report)
	}
}

// TestReceiverVerifiesBeforeTrusting posts deliveries to the receiver as
// payd would: one signed with another secret wakes nobody, a good one
// wakes its deposit's client, and its retry is a duplicate.
func TestReceiverVerifiesBeforeTrusting(t *testing.T) {
	var handled atomic.Int64
	r, err := startReceiver(&handled)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	r.secret = webhook.NewSecret()
	done := r.expect("dep_1")
	body := []byte(`{"id":"evt_1","type":"deposit.succeeded","timestamp":"2026-01-01T00:00:00Z","data":{"id":"dep_1","status":"succeeded","amount":"1000.00"}}`)
	post := func(secret string) int {
		now := time.Now().Unix()
		sig, err := webhook.Sign(secret, "evt_1", now, body)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", r.url, bytes.NewReader(body))
		req.Header.Set(webhook.HeaderID, "evt_1")
		req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(now, 10))
		req.Header.Set(webhook.HeaderSignature, sig)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post(webhook.NewSecret()); code != http.StatusUnauthorized {
		t.Fatalf("a delivery signed with another secret: %d, want 401", code)
	}
	select {
	case err := <-done:
		t.Fatalf("a forged delivery woke the client (%v)", err)
	default:
	}
	if code := post(r.secret); code != http.StatusNoContent {
		t.Fatalf("a good delivery: %d, want 204", code)
	}
	if a := <-done; a.err != nil {
		t.Fatalf("a good delivery: %v", a.err)
	}
	if code := post(r.secret); code != http.StatusNoContent {
		t.Fatalf("its retry: %d, want 204", code)
	}
	if r.refused.Load() != 1 || r.succeeded.Load() != 1 || r.duplicates.Load() != 1 || handled.Load() != 3 {
		t.Fatalf("counts: %s, %d handled", r, handled.Load())
	}
}

// TestIDTime reads the milliseconds back out of an ID payd makes.
func TestIDTime(t *testing.T) {
	at := time.UnixMilli(1_795_000_000_123)
	if got := idTime(engine.NewID(engine.PrefixEvent, at)); !got.Equal(at) {
		t.Fatalf("idTime = %v, want %v", got, at)
	}
	if got := idTime("evt_not-an-id"); !got.IsZero() {
		t.Fatalf("idTime of a malformed ID = %v, want zero", got)
	}
}
