package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/payd-engine/payd/transport/signing"
)

// harness is a reference server over a real SQLite file in a temp dir, with
// a mock clock, reached over real HTTP.
type harness struct {
	t     *testing.T
	cfg   appConfig
	app   *app
	srv   *httptest.Server
	clock *clock.Mock
	dir   string
}

// start is the mock clock's time at the start of every test.
var start = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, sandboxSettings{})
}

// newHarnessWith builds a harness whose sandbox provider has settings sb;
// configure, if given, changes the rest of its configuration.
func newHarnessWith(t *testing.T, sb sandboxSettings, configure ...func(*appConfig)) *harness {
	t.Helper()
	h := &harness{t: t, clock: clock.NewMock(), dir: t.TempDir()}
	h.clock.Set(start)
	store, err := sqlite.Open(context.Background(), filepath.Join(h.dir, "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	master := make([]byte, engine.MasterKeySize)
	rand.Read(master)
	keyring, err := engine.NewKeyring(master)
	if err != nil {
		t.Fatal(err)
	}
	// The default key file, so that payd admin on the harness's database
	// uses its key (and would refuse another).
	if err := os.WriteFile(filepath.Join(h.dir, "payd.db.key"), []byte(hex.EncodeToString(master)), 0o600); err != nil {
		t.Fatal(err)
	}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.app.handler.ServeHTTP(w, r)
	}))
	t.Cleanup(h.srv.Close)
	h.cfg = appConfig{
		store: store, keyring: keyring, publicURL: h.srv.URL, apiPrefix: "/api", clock: h.clock,
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)), sandbox: sb,
	}
	for _, c := range configure {
		c(&h.cfg)
	}
	if h.app, err = newApp(h.cfg); err != nil {
		t.Fatal(err)
	}
	return h
}

// restart closes the store and builds a new app over the same file, as a
// new process would, keeping the webhook client.
func (h *harness) restart() {
	h.t.Helper()
	if err := h.cfg.store.Close(); err != nil {
		h.t.Fatal(err)
	}
	store, err := sqlite.Open(context.Background(), filepath.Join(h.dir, "payd.db"))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { store.Close() })
	h.cfg.store = store
	if h.app, err = newApp(h.cfg); err != nil {
		h.t.Fatal(err)
	}
}

// testOrg is an organization with its credentials.
type testOrg struct {
	id, keyID, apiKey, secret string
}

func (h *harness) newOrg(s engine.OrganizationSettings) *testOrg {
	h.t.Helper()
	if s.Name == nil {
		name := "Shop"
		s.Name = &name
	}
	creds, err := h.app.engine.CreateOrganization(context.Background(), s)
	if err != nil {
		h.t.Fatal(err)
	}
	return &testOrg{creds.Organization.ID, creds.APIKey.APIKeyID, creds.APIKey.APIKey, creds.APIKey.SigningSecret}
}

func (h *harness) addWallet(org *testOrg, channel, operation, phone, name string) *engine.Wallet {
	h.t.Helper()
	h.clock.Add(time.Millisecond) // IDs, and so the rotation's tie-break, follow creation order
	w, err := h.app.engine.AddWallet(context.Background(), engine.AddWalletParams{
		OrganizationID: org.id, Channel: channel, Operation: operation, Phone: phone, Name: name,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return w
}

// request is one HTTP call to the harness.
type request struct {
	method, path string
	body         string
	apiKey       string // "" sends no Authorization header
	sign         bool   // add valid signature headers
	secret       string // signing secret; the org's when empty
	timestamp    string // overrides the signed timestamp header
	signature    string // overrides the signature header
	header       map[string]string
}

type response struct {
	status int
	body   []byte
	json   map[string]any
}

func (r *response) errorCode() string    { return str(r.json, "error", "code") }
func (r *response) errorMessage() string { return str(r.json, "error", "message") }

// str digs a string out of nested JSON objects.
func str(v any, path ...string) string {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

func (h *harness) do(org *testOrg, req request) *response {
	h.t.Helper()
	if req.method == "" {
		req.method = http.MethodPost
	}
	if req.path == "" {
		req.path = "/api/v1/deposits"
	}
	var body io.Reader
	if req.body != "" {
		body = bytes.NewBufferString(req.body)
	}
	r, err := http.NewRequest(req.method, h.srv.URL+req.path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if req.apiKey != "" {
		r.Header.Set("Authorization", "Bearer "+req.apiKey)
	}
	if req.sign {
		secret := req.secret
		if secret == "" {
			secret = org.secret
		}
		ts := signing.Timestamp(h.clock.Now())
		r.Header.Set(signing.TimestampHeader, ts)
		r.Header.Set(signing.SignatureHeader, signing.Sign([]byte(secret), ts, req.method, req.path, []byte(req.body)))
	}
	if req.timestamp != "" {
		r.Header.Set(signing.TimestampHeader, req.timestamp)
	}
	if req.signature != "" {
		r.Header.Set(signing.SignatureHeader, req.signature)
	}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	out := &response{status: res.StatusCode}
	out.body, _ = io.ReadAll(res.Body)
	_ = json.Unmarshal(out.body, &out.json)
	return out
}

// createH2H is a signed H2H create of the org with body.
func (h *harness) createH2H(org *testOrg, body string) *response {
	h.t.Helper()
	return h.do(org, request{apiKey: org.apiKey, sign: true, body: body})
}

// getDeposit is a GET of a deposit, signed when sign is set.
func (h *harness) getDeposit(org *testOrg, id string, sign bool) *response {
	h.t.Helper()
	return h.do(org, request{method: http.MethodGet, path: "/api/v1/deposits/" + id, apiKey: org.apiKey, sign: sign})
}
