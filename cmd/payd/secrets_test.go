package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport/signing"
)

// TestNoSecretInLogs runs a full flow through a real payd serve with debug
// logs (deposits, verification, a withdrawal, webhooks, rejected keys and
// signatures, a graceful stop) and searches everything it wrote for the
// secrets it saw: API keys, signing secrets, webhook secrets, the master
// key and signature values. None may appear; nor may they in the SQLite
// file, where keys are hashes and secrets sealed.
func TestNoSecretInLogs(t *testing.T) {
	bin := buildPayd(t)
	db := filepath.Join(t.TempDir(), "payd.db")
	env := append(paydEnv(true), "PAYD_LOG_LEVEL=debug")
	var masterHex string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PAYD_MASTER_KEY="); ok {
			masterHex = v
		}
	}
	master, _ := hex.DecodeString(masterHex)
	secrets := map[string]string{
		"master key (hex)":    masterHex,
		"master key (base64)": base64.StdEncoding.EncodeToString(master),
	}

	paydAdmin(t, bin, db, env, "init")
	org := paydAdmin(t, bin, db, env, "org", "create", "--name", "Secretive", "--h2h", "--withdrawals")
	orgID := str(org, "organization_id")
	secrets["api key"] = str(org, "api_key")
	paydAdmin(t, bin, db, env, "wallet", "add", "--org", orgID, "--channel", "bkash", "--operation", "cash_out", "--phone", "01811000001")
	paydAdmin(t, bin, db, env, "balance", "adjust", "--org", orgID, "--amount", "5000", "--reason", "float")
	rotated := paydAdmin(t, bin, db, env, "signing-secret", "rotate", "--key", str(org, "api_key_id"))
	secrets["first signing secret"] = str(org, "signing_secret")
	secrets["signing secret"] = str(rotated, "signing_secret")
	second := paydAdmin(t, bin, db, env, "key", "create", "--org", orgID)
	secrets["second api key"], secrets["second signing secret"] = str(second, "api_key"), str(second, "signing_secret")
	rcv := paydtest.NewReceiver(t, nil)
	ep := paydAdmin(t, bin, db, env, "webhook", "add", "--org", orgID, "--url", rcv.URL)
	secrets["first webhook secret"] = str(ep, "secret")
	rotatedHook := paydAdmin(t, bin, db, env, "webhook", "rotate-secret", "--endpoint", str(ep, "endpoint_id"))
	secrets["webhook secret"] = str(rotatedHook, "secret")
	for name, s := range secrets {
		if len(s) < 16 {
			t.Fatalf("setup: %s is %q", name, s)
		}
	}

	inst := startInstance(t, bin, db, env)
	c := &crashClient{key: secrets["api key"], secret: secrets["signing secret"], stats: &crashStats{}, failf: t.Fatalf}
	c.base.Store(&inst.base)
	signed := func(method, path, body string) reply {
		t.Helper()
		ts := signing.Timestamp(time.Now())
		sig := signing.Sign([]byte(c.secret), ts, method, path, []byte(body))
		secrets[fmt.Sprintf("signature of %s %s", method, path)] = strings.TrimPrefix(sig, "v1=")
		return c.do(method, path, body, true)
	}
	dep := signed("POST", "/api/v1/deposits", h2h(kv{"merchant_id", `"secret-1"`}))
	if dep.status != 201 {
		t.Fatalf("deposit: %d %s", dep.status, dep.raw)
	}
	id := str(dep.body, "id")
	recipient := str(dep.body, "next_action", "recipient", "value")
	if res := c.do("POST", "/api/sandbox/payments", fmt.Sprintf(`{"channel":"bkash","transaction_id":"SECRET1","payer_phone":"01712345678","recipient_phone":%q,"amount":"500","status":"completed"}`, recipient), false); res.status != 201 {
		t.Fatalf("payment: %d %s", res.status, res.raw)
	}
	if res := signed("POST", "/api/v1/deposits/"+id+"/verify", `{"provider_transaction_id":"SECRET1"}`); res.status != 202 {
		t.Fatalf("verify: %d %s", res.status, res.raw)
	}
	wd := c.do("POST", "/api/v1/withdraws", withdrawal(kv{"merchant_id", `"secret-wd"`}), false)
	if wd.status != 201 {
		t.Fatalf("withdrawal: %d %s", wd.status, wd.raw)
	}
	// Rejected credentials: a wrong key, a signature by the old secret's
	// neighbour, a stale one.
	wrong := &crashClient{key: "payd_sk_" + strings.Repeat("Z", 43), stats: c.stats, failf: t.Fatalf}
	wrong.base.Store(&inst.base)
	secrets["rejected api key"] = wrong.key
	if res := wrong.do("GET", "/api/v1/balance", "", false); res.status != 401 {
		t.Fatalf("wrong key: %d", res.status)
	}
	other := &crashClient{key: c.key, secret: secrets["second signing secret"], stats: c.stats, failf: t.Fatalf}
	other.base.Store(&inst.base)
	if res := other.do("GET", "/api/v1/deposits/"+id, "", true); res.status != 401 {
		t.Fatalf("wrong secret: %d", res.status)
	}
	ts := signing.Timestamp(time.Now().Add(-time.Hour))
	staleSig := signing.Sign([]byte(c.secret), ts, "GET", "/api/v1/deposits/"+id, nil)
	secrets["stale signature"] = strings.TrimPrefix(staleSig, "v1=")
	req, _ := http.NewRequest("GET", inst.base+"/api/v1/deposits/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set(signing.TimestampHeader, ts)
	req.Header.Set(signing.SignatureHeader, staleSig)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 401 {
		t.Fatalf("stale signature: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	// Settle the payout now rather than after the sandbox's poll.
	if res := c.do("POST", "/api/sandbox/withdraws/"+str(wd.body, "id")+"/settle", `{"outcome":"succeeded"}`, false); res.status != 200 {
		t.Fatalf("settle: %d %s", res.status, res.raw)
	}
	// Wait for the verification, the payout and the webhooks.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		d := signed("GET", "/api/v1/deposits/"+id, "")
		w := c.do("GET", "/api/v1/withdraws/"+str(wd.body, "id"), "", false)
		if str(d.body, "status") == "succeeded" && str(w.body, "status") == "succeeded" && len(rcv.Deliveries()) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the flow did not complete: %s / %s, %d webhooks", d.raw, w.raw, len(rcv.Deliveries()))
		}
	}
	for i, d := range rcv.Deliveries() {
		for j, v := range strings.Fields(d.Header.Get("webhook-signature")) {
			secrets[fmt.Sprintf("webhook signature %d.%d", i, j)] = strings.TrimPrefix(v, "v1,")
		}
	}
	// A graceful stop, whose shutdown logs count too.
	inst.cmd.Process.Signal(syscall.SIGTERM)
	inst.cmd.Process.Wait()
	time.Sleep(100 * time.Millisecond) // the log reader drains the pipe
	logs := inst.logText()
	if !strings.Contains(logs, `"level":"DEBUG"`) || !strings.Contains(logs, `"msg":"stopped"`) {
		t.Fatalf("no debug logging or no clean stop:\n%s", logs)
	}
	for name, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the logs show the %s", name)
		}
	}
	// Nor does the database file, where keys are hashes and secrets sealed.
	var stored []byte
	for _, f := range []string{db, db + "-wal"} {
		b, _ := os.ReadFile(f)
		stored = append(stored, b...)
	}
	for name, s := range secrets {
		if strings.HasPrefix(name, "master") || strings.HasPrefix(name, "api key") || strings.Contains(name, "secret") && !strings.Contains(name, "signature") {
			if strings.Contains(string(stored), s) {
				t.Errorf("the database file holds the %s in the clear", name)
			}
		}
	}
	t.Logf("FIGURES secrets_checked=%d log_lines=%d", len(secrets), strings.Count(logs, "\n"))
}
