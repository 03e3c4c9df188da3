package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// servingPayd is a payd serve running in this process.
type servingPayd struct {
	stop    func() error
	startup map[string]any // the "payd listening" record
	log     *paydtest.SyncBuffer
}

// startServe runs "payd serve --addr 127.0.0.1:0 --log-format json args..."
// in this process and waits for its startup line. It fails the test if the
// server stops first.
func startServe(t *testing.T, args ...string) *servingPayd {
	t.Helper()
	s, err := tryServe(t, args...)
	if err != nil {
		t.Fatalf("payd serve %v: %v\n%s", args, err, s.log)
	}
	return s
}

// tryServe is startServe that returns the error of a server that stops
// before it listens.
func tryServe(t *testing.T, args ...string) (*servingPayd, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &servingPayd{log: &paydtest.SyncBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}, args...), &bytes.Buffer{}, s.log)
	}()
	var once sync.Once
	var stopErr error
	s.stop = func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	t.Cleanup(func() { s.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(s.log.String()))
		for sc.Scan() {
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "payd listening" {
				s.startup = rec
				return s, nil
			}
		}
		select {
		case err := <-done:
			once.Do(func() { cancel(); stopErr = err })
			return s, err
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("payd serve did not start within 30 s")
	return nil, nil
}

// TestHelpExitsZero: asking any command for its usage prints it on stdout
// and exits 0; a command line without a command still exits 2.
func TestHelpExitsZero(t *testing.T) {
	bin := buildPayd(t)
	for _, tc := range []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"--help"}, "usage: payd <command>"},
		{[]string{"serve", "--help"}, "-addr"},
		{[]string{"serve", "-h"}, "-master-key-file"},
		{[]string{"conformance", "--help"}, "-base-url"},
		{[]string{"admin", "--help"}, "org create"},
		{[]string{"admin", "org", "--help"}, "org update"},
		{[]string{"admin", "org", "create", "--help"}, "-name"},
		{[]string{"admin", "init", "--help"}, "-db"},
		{[]string{"admin", "device", "add", "-h"}, "-wallet"},
		{[]string{"admin", "ledger", "--help"}, "payd admin ledger verify: recompute"},
		{[]string{"admin", "org", "create", "--help"}, "usage: payd admin org create [flags]: create an organization"},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Dir = t.TempDir() // no database is created either
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("payd %s: %v (want exit 0)\nstderr: %s", strings.Join(tc.args, " "), err, stderr.String())
			continue
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("payd %s printed %q on stdout, want the usage with %q", strings.Join(tc.args, " "), stdout.String(), tc.want)
		}
		if entries, _ := os.ReadDir(cmd.Dir); len(entries) != 0 {
			t.Errorf("payd %s created %v", strings.Join(tc.args, " "), entries)
		}
	}
	for _, args := range [][]string{{}, {"admin"}, {"serve", "--no-such-flag"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = t.TempDir()
		var ee *exec.ExitError
		if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("payd %s: %v, want a non-zero exit", strings.Join(args, " "), err)
		}
	}
}

// TestAdminNeverCreatesDatabase: a mistyped --db is an error that says how
// to create a database, and leaves no file behind; init creates one.
func TestAdminNeverCreatesDatabase(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	dir := t.TempDir()
	typo := filepath.Join(dir, "pyad.db")
	for _, args := range [][]string{
		{"admin", "org", "list", "--db", typo},
		{"admin", "org", "create", "--name", "Shop", "--db", typo},
		{"admin", "device", "list", "--org", "org_x", "--db", typo},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "no database at "+typo) ||
			!strings.Contains(err.Error(), "payd serve --db "+typo) || !strings.Contains(err.Error(), "payd admin init --db "+typo) {
			t.Errorf("payd %s: %v, want an error saying how to create the database", strings.Join(args, " "), err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("admin commands on a missing database created %v", entries)
	}

	out := runAdmin(t, typo, "init")
	if out["created"] != true || out["master_key_created"] != true || str(out, "master_key") != typo+".key" {
		t.Fatalf("admin init: %v", out)
	}
	if out := runAdmin(t, typo, "init"); out["created"] != false || out["master_key_created"] != false {
		t.Fatalf("a second admin init: %v", out)
	}
	if list := runAdmin(t, typo, "org", "list"); list == nil {
		t.Fatal("org list after init printed nothing")
	}
}

// TestMasterKeyRefused: a server or admin command given another master key
// than the database's, or none because its file is gone, refuses to start,
// naming the key and what to do, and makes no new key.
func TestMasterKeyRefused(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	db := newAdminDB(t)
	keyFile := db + ".key"
	org := runAdmin(t, db, "org", "create", "--name", "Shop", "--h2h")
	other := filepath.Join(t.TempDir(), "other.key")
	if err := os.WriteFile(other, []byte(hex.EncodeToString(bytes.Repeat([]byte{7}, 32))), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, wants []string, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append(args, "--db", db), &stdout, &stderr)
		if err == nil {
			t.Fatalf("%s: payd %s started", what, strings.Join(args, " "))
		}
		for _, want := range wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: payd %s: %v\nwant it to say %q", what, strings.Join(args, " "), err, want)
			}
		}
	}
	wrongFile := []string{"master key file " + other, "not the key that sealed", "--master-key-file", "PAYD_MASTER_KEY"}
	refused("another key file", wrongFile, "admin", "org", "show", "--org", str(org, "organization_id"), "--master-key-file", other)
	refused("another key file", wrongFile, "serve", "--addr", "127.0.0.1:0", "--master-key-file", other)

	t.Setenv("PAYD_MASTER_KEY", hex.EncodeToString(bytes.Repeat([]byte{9}, 32)))
	wrongEnv := []string{"PAYD_MASTER_KEY is not the key that sealed"}
	refused("another PAYD_MASTER_KEY", wrongEnv, "admin", "org", "list")
	refused("another PAYD_MASTER_KEY", wrongEnv, "serve", "--addr", "127.0.0.1:0")
	t.Setenv("PAYD_MASTER_KEY", "")

	if err := os.Rename(keyFile, keyFile+".bak"); err != nil {
		t.Fatal(err)
	}
	gone := []string{"master key file " + keyFile + " does not exist", "restore", "PAYD_MASTER_KEY"}
	refused("the key file gone", gone, "admin", "org", "list")
	refused("the key file gone", gone, "serve", "--addr", "127.0.0.1:0")
	if _, err := os.Stat(keyFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a new key file was made for a database with sealed secrets: %v", err)
	}
	if err := os.Rename(keyFile+".bak", keyFile); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--db", db)
	if s.startup["key_check"] != "verified" {
		t.Errorf("startup with the right key: key_check %v", s.startup["key_check"])
	}
}

// TestMasterKeyCheckOfOlderDatabase: a database written before the key
// check gets one from the first start whose key opens its secrets; another
// key neither starts nor records one.
func TestMasterKeyCheckOfOlderDatabase(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	db := filepath.Join(t.TempDir(), "payd.db")
	master := make([]byte, engine.MasterKeySize)
	rand.Read(master)
	if err := os.WriteFile(db+".key", []byte(hex.EncodeToString(master)), 0o600); err != nil {
		t.Fatal(err)
	}
	// As an older payd did: secrets sealed, no check recorded.
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	keyring, _ := engine.NewKeyring(master)
	eng, err := engine.New(engine.Config{Store: store, Provider: noProvider{}, Keyring: keyring})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CreateOrganization(context.Background(), engine.OrganizationSettings{Name: ptr("Old")}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"admin", "org", "list", "--db", db, "--master-key-file", db + ".wrong"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing other key file: %v", err)
	}
	t.Setenv("PAYD_MASTER_KEY", hex.EncodeToString(bytes.Repeat([]byte{3}, 32)))
	if err := run(context.Background(), []string{"admin", "org", "list", "--db", db}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "PAYD_MASTER_KEY is not the key") {
		t.Fatalf("another key on an older database: %v", err)
	}
	t.Setenv("PAYD_MASTER_KEY", "")
	s := startServe(t, "--db", db)
	if s.startup["key_check"] != "recorded" || s.startup["db_created"] != false || s.startup["master_key_created"] != false {
		t.Fatalf("first start with the right key: %v", s.startup)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAYD_MASTER_KEY", hex.EncodeToString(bytes.Repeat([]byte{3}, 32)))
	if err := run(context.Background(), []string{"admin", "org", "list", "--db", db}, &stdout, &stderr); err == nil {
		t.Fatal("another key started after the check was recorded")
	}
}

// TestStartupLine: the startup line says the mode, the database and the
// key and whether each was just created, the address, and the next command.
func TestStartupLine(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	db := filepath.Join(t.TempDir(), "payd.db")
	s := startServe(t, "--db", db)
	want := map[string]any{
		"mode": "sandbox: test mode, no money moves", "db": db, "db_created": true,
		"master_key": db + ".key", "master_key_created": true, "key_check": "recorded",
		"next": `create an organization: payd admin org create --db ` + db + ` --name "My Shop" --h2h`,
	}
	for k, v := range want {
		if s.startup[k] != v {
			t.Errorf("first start: %s = %v, want %v", k, s.startup[k], v)
		}
	}
	if !strings.HasPrefix(str(s.startup, "addr"), "127.0.0.1:") || !strings.HasSuffix(str(s.startup, "api"), "/api") {
		t.Errorf("first start: addr %v, api %v", s.startup["addr"], s.startup["api"])
	}
	runAdmin(t, db, "org", "create", "--name", "Shop") // alongside the server
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	s = startServe(t, "--db", db, "--provider", "smsinbox")
	want = map[string]any{
		"mode": "smsinbox: real money, wallets proven by their phones' SMS", "db_created": false,
		"master_key_created": false, "key_check": "verified",
		"next": "payd admin lists the operator commands, e.g. payd admin org list --db " + db,
	}
	for k, v := range want {
		if s.startup[k] != v {
			t.Errorf("second start: %s = %v, want %v", k, s.startup[k], v)
		}
	}
}

// TestStartupLineHidesDatabasePassword: a Postgres URL is logged without
// its password, and the suggested command does not repeat it.
func TestStartupLineHidesDatabasePassword(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	const password = "s3cret-Passw0rd"
	u.User = url.UserPassword(u.User.Username(), password)
	t.Setenv("PAYD_MASTER_KEY", hex.EncodeToString(bytes.Repeat([]byte{5}, 32)))
	s, err := tryServe(t, "--db", u.String())
	if err != nil {
		t.Skipf("the test server refuses a password in the URL: %v", err)
	}
	if strings.Contains(s.log.String(), password) {
		t.Fatalf("the log shows the database password:\n%s", s.log)
	}
	if !strings.Contains(str(s.startup, "db"), u.Host) || !strings.Contains(str(s.startup, "next"), "--db <the same database URL>") {
		t.Fatalf("startup line: %v", s.startup)
	}
}

// TestSecondServeOnOneSQLiteFile: a second payd serve on the same SQLite
// file refuses to start, saying why; admin commands still run alongside;
// the lock goes with the server that held it.
func TestSecondServeOnOneSQLiteFile(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	db := filepath.Join(t.TempDir(), "payd.db")
	first := startServe(t, "--db", db)
	_, err := tryServe(t, "--db", db)
	if err == nil || !strings.Contains(err.Error(), "another payd serve is running on database "+db) || !strings.Contains(err.Error(), "Postgres") {
		t.Fatalf("second serve: %v, want a refusal naming SQLite's one process and Postgres", err)
	}
	org := runAdmin(t, db, "org", "create", "--name", "Alongside", "--h2h")
	res, err := http.Get(str(first.startup, "api") + "/v1/balance")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the first server stopped answering: %d", res.StatusCode)
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	second := startServe(t, "--db", db) // the lock was released on exit
	if second.startup["next"] == nil || str(org, "organization_id") == "" {
		t.Fatal("second start")
	}
}

// TestServeLockAfterCrash: a SIGKILLed server's lock does not keep the next
// one from starting.
func TestServeLockAfterCrash(t *testing.T) {
	bin := buildPayd(t)
	db := filepath.Join(t.TempDir(), "payd.db")
	env := paydEnv(false)
	first := startInstance(t, bin, db, env)
	first.cmd.Process.Kill()
	first.cmd.Wait()
	if _, err := os.Stat(db + ".lock"); err != nil {
		t.Fatalf("the lock file: %v", err)
	}
	startInstance(t, bin, db, env)
}

// TestNotFoundOutsidePrefix: a path outside the API prefix is answered in
// the error envelope, with a hint that the API lives under the prefix.
func TestNotFoundOutsidePrefix(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{})
	for path, hint := range map[string]string{
		"/v1/balance":  "the API is under /api (e.g. /api/v1/balance)",
		"/v1/deposits": "the API is under /api (e.g. /api/v1/deposits)",
		"/":            "the API is under /api (e.g. /api/v1/balance)",
		"/favicon.ico": "the API is under /api",
	} {
		res := h.Do(org, request{Method: http.MethodGet, Path: path, APIKey: org.APIKey})
		if res.Status != http.StatusNotFound || res.ErrorCode() != "not_found" || !strings.Contains(res.ErrorMessage(), hint) {
			t.Errorf("GET %s: %d %s, want 404 not_found with %q", path, res.Status, res.Body, hint)
		}
	}
	if res := h.Do(org, request{Method: http.MethodGet, Path: "/api/v1/balance", APIKey: org.APIKey}); res.Status != http.StatusOK {
		t.Fatalf("the API itself: %d %s", res.Status, res.Body)
	}
}
