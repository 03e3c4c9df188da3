package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/provider/bkash/bkashsim"
)

// TestBkashConnectAndServe: payd admin bkash connect stores the credentials
// sealed (no secret in its output or the database's text); payd serve
// --provider smsinbox then pays the organization's bkash redirect deposits
// on bKash's page (the simulator), executes on the callback and succeeds
// the deposit; disconnect forgets the credentials.
func TestBkashConnectAndServe(t *testing.T) {
	sim := bkashsim.New(nil)
	defer sim.Close()
	app := bkashsim.App{AppKey: "cli-app", AppSecret: "CLI-SECRET-x9", Username: "cli-user", Password: "CLI-PASSWORD-y8"}
	sim.AddApp(app)
	db := newAdminDB(t)
	org := runAdmin(t, db, "org", "create", "--name", "Shop")
	orgID, apiKey := str(org, "organization_id"), str(org, "api_key")
	out := runAdmin(t, db, "bkash", "connect", "--org", orgID, "--app-key", app.AppKey, "--app-secret", app.AppSecret,
		"--username", app.Username, "--password", app.Password, "--base-url", sim.BaseURL())
	raw, _ := json.Marshal(out)
	if out["connected"] != true || strings.Contains(string(raw), app.AppSecret) || strings.Contains(string(raw), app.Password) {
		t.Fatalf("connect printed %s", raw)
	}
	s := startServe(t, "--db", db, "--provider", "smsinbox")
	api := str(s.startup, "api")
	req, _ := http.NewRequest(http.MethodPost, api+"/v1/deposits",
		strings.NewReader(`{"amount":"500","payment_method":"bkash","redirect_url":"https://shop.example/r","merchant_id":"CLI1"}`))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var dep map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&dep)
	resp.Body.Close()
	checkout := str(dep, "redirect_url") // where the payer is sent
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(checkout, sim.URL+"/pay?") {
		t.Fatalf("create: %d %v", resp.StatusCode, dep)
	}
	u, _ := url.Parse(checkout)
	cb, err := sim.Approve(u.Query().Get("paymentID"), "01712345678")
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := noFollow.Get(cb); err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: %v %v", resp, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, api+"/v1/deposits/"+str(dep, "id"), nil)
		req.Header.Set("Authorization", "Bearer "+apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if str(got, "status") == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deposit %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.log.String(), app.AppSecret) || strings.Contains(s.log.String(), app.Password) {
		t.Fatal("the server's log shows a credential")
	}
	for _, f := range []string{db, db + "-wal"} {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), app.AppSecret) || strings.Contains(string(b), app.Password) {
			t.Fatalf("%s shows a credential", f)
		}
	}
	if out := runAdmin(t, db, "bkash", "disconnect", "--org", orgID); out["connected"] != false {
		t.Fatalf("disconnect: %v", out)
	}
}
