package transport_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport"
)

// needPHP returns the php binary with cURL, or skips the test.
func needPHP(t *testing.T) string {
	t.Helper()
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("PHP is not installed (apt-get install php-cli php-curl): the UddoktaPay plugin test needs it")
	}
	if err := exec.Command(php, "-r", `exit(function_exists("curl_init") ? 0 : 1);`).Run(); err != nil {
		t.Skip("PHP has no cURL (apt-get install php-curl): the UddoktaPay plugin test needs it")
	}
	return php
}

// runPHP runs a step of the PHP client and decodes what it prints.
func runPHP(t *testing.T, php string, args ...string) map[string]any {
	t.Helper()
	out, err := exec.Command(php, append([]string{filepath.Join("testdata", "uddoktapay", "client.php")}, args...)...).CombinedOutput()
	var v map[string]any
	if err != nil || json.Unmarshal(out, &v) != nil {
		t.Fatalf("php %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// TestCompatPHPPlugin drives the compat API from PHP as UddoktaPay's PHP
// library and WooCommerce plugin do: cURL with the key header and JSON
// bodies, the API URL given with "/checkout-v2" and cut back to "/api",
// amounts as PHP ints and WooCommerce's string totals; the shop's IPN
// endpoint and return page (PHP's own server) check the key and verify the
// invoice.
func TestCompatPHPPlugin(t *testing.T) {
	php := needPHP(t)
	h := newHarness(t, func(c *payd.Config) { c.Webhooks = transport.NewWebhookClient(true) }) // the shop is on loopback
	org := h.newCompatOrg()
	// A request from this process first: the race detector sees the
	// harness's setup happen before requests only through this process's
	// own socket writes, and PHP's come from another process.
	h.Balance(org.testOrg)
	apiURL := h.URL + "/api/checkout-v2" // as the plugins' settings are often filled in

	// The shop: PHP's built-in server with the IPN endpoint and return page.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	shopAddr := l.Addr().String()
	l.Close()
	out := t.TempDir()
	shop := exec.Command(php, "-S", shopAddr, "-t", filepath.Join("testdata", "uddoktapay"))
	shop.Env = append(os.Environ(), "SHOP_API_KEY="+org.compatKey, "SHOP_API_URL="+h.URL+"/api/", "SHOP_OUT="+out)
	if err := shop.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shop.Process.Kill(); _ = shop.Wait() })
	shopURL := "http://" + shopAddr
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", shopAddr); err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatal("PHP's server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Amounts as the plugins hold them; a float with a third decimal is
	// refused with a message the plugin shows, not rounded.
	refused := runPHP(t, php, "create", org.compatKey, apiURL, "float:150.001", shopURL)
	if msg, _ := refused["error"].(string); !strings.Contains(msg, "amount") {
		t.Errorf("150.001: %v, want a refusal naming the amount", refused)
	}
	if r := runPHP(t, php, "create", org.APIKey, apiURL, "int:150", shopURL); r["error"] == nil {
		t.Errorf("the account API key created a payment: %v", r)
	}
	runPHP(t, php, "create", org.compatKey, apiURL, "int:150", shopURL)
	created := runPHP(t, php, "create", org.compatKey, h.URL+"/api", "string:1500.00", shopURL)
	paymentURL, _ := created["payment_url"].(string)
	if !strings.HasPrefix(paymentURL, h.URL+"/pay/") {
		t.Fatalf("create: %v", created)
	}
	invoice := paymentURL[strings.LastIndexByte(paymentURL, '/')+1:]
	if v := runPHP(t, php, "verify", org.compatKey, h.URL+"/api/", invoice); v["status"] != engine.CompatPending {
		t.Fatalf("verify before paying: %v", v)
	}

	h.payInvoice(org, invoice, "UPPHP0001", "1500.00")
	if _, err := h.Engine.DeliverCompatIPNs(context.Background()); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "ipn.json"))
	if err != nil {
		refusal, _ := os.ReadFile(filepath.Join(out, "ipn-refused.txt"))
		t.Fatalf("the shop's IPN endpoint kept nothing (%v): %s", err, refusal)
	}
	var ipn map[string]any
	_ = json.Unmarshal(raw, &ipn)
	if ipn["status"] != engine.CompatCompleted || ipn["amount"] != "1500.00" || ipn["invoice_id"] != invoice || ipn["transaction_id"] != "UPPHP0001" {
		t.Errorf("what the shop verified on the IPN: %s", raw)
	}

	// The payer's return: payd's page sends them to the shop's page with
	// invoice_id, which verifies it.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(paymentURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || loc != shopURL+"/success.php?order=42&invoice_id="+invoice {
		t.Fatalf("the paid page: %d %q", res.StatusCode, loc)
	}
	back, err := http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Body.Close()
	var page struct {
		Order    string         `json:"order"`
		Verified map[string]any `json:"verified"`
	}
	if err := json.NewDecoder(back.Body).Decode(&page); err != nil || page.Order != "42" || page.Verified["status"] != engine.CompatCompleted {
		t.Errorf("the shop's return page: %+v %v", page, err)
	}
	if md, _ := page.Verified["metadata"].(map[string]any); md["customer"] != "রহিম" || md["order_id"] != float64(42) {
		t.Errorf("metadata came back as %v", page.Verified["metadata"])
	}
}
