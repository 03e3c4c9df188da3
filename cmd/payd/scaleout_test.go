package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/transport/signing"
)

// buildPayd compiles this command once per test into a temp dir.
func buildPayd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "payd")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// instance is one running payd serve.
type instance struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port
	mu   sync.Mutex
	logs bytes.Buffer
}

func (i *instance) logText() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.logs.String()
}

func startInstance(t *testing.T, bin, db string, env []string) *instance {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--log-format", "json",
		"--lease-duration", "2s", "--sandbox-payout-delay", "200ms", "--webhook-allow-private")
	cmd.Env = env
	inst := &instance{cmd: cmd}
	cmd.Stdout = instanceStdout{inst} // payd writes nothing there; if it did, it joins the log
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			inst.mu.Lock()
			inst.logs.WriteString(line + "\n")
			inst.mu.Unlock()
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "payd listening" {
				addr <- rec.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		inst.base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("payd did not start")
	}
	return inst
}

// cluster is a client that spreads requests over instances like a load
// balancer and, like a real client, retries a request that got no answer
// on another instance with the same merchant_id and a fresh signature.
type cluster struct {
	t         *testing.T
	instances []*instance
	dead      sync.Map // base -> true
	next      atomic.Int64
	key       string
	secret    string
}

func (c *cluster) do(method, path, body string, sign bool) (int, map[string]any) {
	c.t.Helper()
	for try := 0; try < 20; try++ {
		inst := c.instances[int(c.next.Add(1))%len(c.instances)]
		if _, dead := c.dead.Load(inst.base); dead {
			continue
		}
		req, _ := http.NewRequest(method, inst.base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.key)
		if sign {
			ts := signing.Timestamp(time.Now())
			req.Header.Set(signing.TimestampHeader, ts)
			req.Header.Set(signing.SignatureHeader, signing.Sign([]byte(c.secret), ts, method, path, []byte(body)))
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			time.Sleep(50 * time.Millisecond) // no answer: try again elsewhere
			continue
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var out map[string]any
		json.Unmarshal(data, &out)
		if res.StatusCode >= 500 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		return res.StatusCode, out
	}
	c.t.Fatalf("%s %s: no instance answered", method, path)
	return 0, nil
}

// TestScaleOutOnPostgres runs three payd serve processes on one Postgres
// database under a mixed load, kills one with SIGKILL mid-work, and checks
// that every verification, payout and event took effect exactly once
// (events: delivered at least once).
func TestScaleOutOnPostgres(t *testing.T) {
	db := pgtest.URL(t)
	bin := buildPayd(t)
	master := make([]byte, 32)
	rand.Read(master)
	env := append(os.Environ(), "PAYD_MASTER_KEY="+hex.EncodeToString(master))
	admin := func(args ...string) map[string]any {
		cmd := exec.Command(bin, append(append([]string{"admin"}, args...), "--db", db, "--json")...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("payd admin %v: %v", args, err)
		}
		var v map[string]any
		json.Unmarshal(out, &v)
		return v
	}
	org := admin("org", "create", "--name", "Scale", "--h2h", "--withdrawals", "--deposit-fee-percent", "1")
	orgID := str(org, "organization_id")
	for i := range 3 {
		admin("wallet", "add", "--org", orgID, "--channel", "bkash", "--operation", "cash_out", "--phone", fmt.Sprintf("0181000000%d", i))
	}
	admin("balance", "adjust", "--org", orgID, "--amount", "100000", "--reason", "float")
	rcv := paydtest.NewReceiver(t, nil)
	admin("webhook", "add", "--org", orgID, "--url", rcv.URL)

	c := &cluster{t: t, key: str(org, "api_key"), secret: str(org, "signing_secret")}
	for range 3 {
		c.instances = append(c.instances, startInstance(t, bin, db, env))
	}

	const deposits, withdrawals = 30, 20
	var wg sync.WaitGroup
	var depositIDs, withdrawalIDs sync.Map
	for i := range deposits {
		wg.Go(func() {
			body := h2h(kv{"merchant_id", fmt.Sprintf(`"dep-%d"`, i)}, kv{"amount", `"1000"`})
			status, dep := c.do("POST", "/api/v1/deposits", body, true)
			if status != 201 && status != 200 {
				t.Errorf("create deposit %d: %d %v", i, status, dep)
				return
			}
			id := str(dep, "id")
			depositIDs.Store(id, true)
			recipient := str(dep, "next_action", "recipient", "value")
			tx := fmt.Sprintf("SCALE%04d", i)
			if status, res := c.do("POST", "/api/sandbox/payments", fmt.Sprintf(`{"channel":"bkash","transaction_id":%q,"payer_phone":"01712345678","recipient_phone":%q,"amount":"1000","status":"completed"}`, tx, recipient), false); status != 201 && status != 409 {
				t.Errorf("sandbox payment %d: %d %v", i, status, res)
			}
			if status, res := c.do("POST", "/api/v1/deposits/"+id+"/verify", fmt.Sprintf(`{"provider_transaction_id":%q}`, tx), true); status != 202 && status != 200 {
				t.Errorf("verify %d: %d %v", i, status, res)
			}
		})
	}
	for i := range withdrawals {
		wg.Go(func() {
			body := withdrawal(kv{"merchant_id", fmt.Sprintf(`"wd-%d"`, i)}, kv{"amount", `"500"`})
			status, w := c.do("POST", "/api/v1/withdraws", body, false)
			switch {
			case status == 201:
				withdrawalIDs.Store(str(w, "id"), true)
			case status == 409: // created by a request whose answer was lost
			default:
				t.Errorf("withdrawal %d: %d %v", i, status, w)
			}
		})
	}
	// Kill one instance in the middle of the work: once it has answered a
	// few requests, while the rest are still being sent.
	victim := c.instances[1]
	for waited := time.Now(); strings.Count(victim.logText(), `"msg":"request"`) < 5; {
		if time.Since(waited) > 30*time.Second {
			t.Fatal("the instance to kill never got work")
		}
		time.Sleep(time.Millisecond)
	}
	victim.cmd.Process.Signal(syscall.SIGKILL)
	c.dead.Store(victim.base, true)
	wg.Wait()
	if served := strings.Count(victim.logText(), `"msg":"request"`); served == 0 {
		t.Fatal("the killed instance had served nothing: it was not killed mid-work")
	} else {
		t.Logf("killed an instance that had served %d requests", served)
	}

	store, err := postgres.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// Wait for the survivors to finish everything, including the killed
	// instance's claims once their leases run out.
	deadline := time.Now().Add(90 * time.Second)
	var summary string
	for {
		done, s := scaleOutDone(t, store, orgID, deposits, withdrawals, rcv)
		summary = s
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if done, _ := scaleOutDone(t, store, orgID, deposits, withdrawals, rcv); !done {
		t.Fatalf("not everything completed: %s", summary)
	}
	t.Logf("completed after the kill: %s", summary)
}

// scaleOutDone checks the database: every deposit succeeded with exactly
// one credit, every withdrawal succeeded with exactly one hold and one
// settlement, the ledger balances, and every event reached the receiver.
func scaleOutDone(t *testing.T, store *postgres.Store, orgID string, deposits, withdrawals int, rcv *paydtest.Receiver) (bool, string) {
	t.Helper()
	var journals []*engine.Journal
	var events []*engine.Event
	var sums map[string]decimal.Decimal
	err := store.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		var err error
		if journals, err = tx.ListJournals(ctx, orgID); err != nil {
			return err
		}
		if sums, err = tx.AccountBalances(ctx, orgID); err != nil {
			return err
		}
		events, err = tx.ListEvents(ctx, engine.ListEventsParams{OrganizationID: orgID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	perRef := map[string]map[string]int{}
	for _, j := range journals {
		if perRef[j.Kind] == nil {
			perRef[j.Kind] = map[string]int{}
		}
		perRef[j.Kind][j.Reference]++
	}
	for kind, refs := range perRef {
		for ref, n := range refs {
			if n != 1 && kind != engine.JournalAdjustment {
				t.Fatalf("%s for %s written %d times", kind, ref, n)
			}
		}
	}
	total := decimal.Zero
	for account, v := range sums {
		total = total.Add(v)
		if (account == engine.AccountAvailable || account == engine.AccountHeld) && v.IsNegative() {
			t.Fatalf("%s is negative: %s", account, v)
		}
	}
	if !total.IsZero() {
		t.Fatalf("the ledger sums to %s", total)
	}
	delivered := map[string]bool{}
	for _, d := range rcv.Deliveries() {
		delivered[d.Header.Get("webhook-id")] = true
	}
	undelivered := 0
	perType := map[string]int{}
	for _, ev := range events {
		perType[ev.Type]++
		if !delivered[ev.ID] {
			undelivered++
		}
	}
	credits, settles := len(perRef[engine.JournalDepositCredit]), len(perRef[engine.JournalWithdrawalSettle])
	summary := fmt.Sprintf("%d/%d deposits credited, %d/%d withdrawals settled, %d events (%v), %d undelivered",
		credits, deposits, settles, withdrawals, len(events), perType, undelivered)
	done := credits == deposits && settles == withdrawals && len(perRef[engine.JournalWithdrawalHold]) == withdrawals &&
		perType[engine.EventDepositSucceeded] == deposits && perType[engine.EventWithdrawSucceeded] == withdrawals &&
		undelivered == 0
	return done, summary
}
