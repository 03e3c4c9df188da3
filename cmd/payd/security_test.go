package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
)

// Security review (issue 15): each test here failed on the code before its
// fix. RELIABILITY.md lists them; those of the HTTP API are in transport.

// TestDatabasePasswordRedacted: no form of a database password reaches an
// error or the log: a URL's user password, password and sslpassword
// parameters in a URL's query or a key=value DSN.
func TestDatabasePasswordRedacted(t *testing.T) {
	const secret = "s3cret-pw"
	for _, c := range []struct{ dsn, keep string }{
		{"postgres://payd:" + secret + "@db.internal:5432/payd?sslmode=disable", "db.internal:5432/payd?sslmode=disable"},
		{"postgres://payd@db.internal/payd?sslmode=require&password=" + secret, "sslmode=require"},
		{"postgresql://db.internal/payd?sslpassword=" + secret + "&sslcert=/c.pem", "sslcert=/c.pem"},
		{"postgres://payd@db.internal/payd?PassWord=" + secret, "payd@db.internal/payd"},
		{"postgres://payd:" + secret + "@db.internal/payd?password=" + secret, "db.internal/payd"},
		{"host=db.internal user=payd password=" + secret + " dbname=payd", "host=db.internal user=payd"},
		{"host=db.internal password = '" + secret + " x' sslpassword=" + secret + " dbname=payd", "dbname=payd"},
		{"/var/lib/payd/payd.db", "/var/lib/payd/payd.db"},
	} {
		got := redactDSN(c.dsn)
		if strings.Contains(got, secret) || strings.Contains(got, "s3cret") || !strings.Contains(got, c.keep) {
			t.Errorf("redactDSN(%q) = %q", c.dsn, got)
		}
	}

	// The server's and the admin commands' errors and logs, for a database
	// that cannot be reached.
	t.Setenv("PAYD_MASTER_KEY", strings.Repeat("ab", 32))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	dsn := "postgres://payd@" + dead + "/payd?connect_timeout=2&password=" + secret
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--db", dsn},
		{"admin", "org", "create", "--name", "X", "--db", dsn},
	} {
		var out, logs bytes.Buffer
		err := run(context.Background(), args, &out, &logs)
		if err == nil {
			t.Fatalf("%s: no error for an unreachable database", args[0])
		}
		if text := err.Error() + out.String() + logs.String(); strings.Contains(text, secret) {
			t.Errorf("%s prints the password: %s", args[0], text)
		}
	}
}

// TestMasterKeyFileModeChecked: a master key file group or others can read
// stops the start, with the fix in the message.
func TestMasterKeyFileModeChecked(t *testing.T) {
	t.Setenv("PAYD_MASTER_KEY", "")
	dir := t.TempDir()
	db := filepath.Join(dir, "payd.db")
	var out, logs bytes.Buffer
	if err := run(context.Background(), []string{"admin", "init", "--db", db}, &out, &logs); err != nil {
		t.Fatalf("admin init: %v %s", err, logs.String())
	}
	if err := run(context.Background(), []string{"admin", "org", "create", "--name", "Shop", "--db", db}, &out, &logs); err != nil {
		t.Fatalf("first start: %v %s", err, logs.String())
	}
	key := db + ".key"
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("created key file: %v %v", fi.Mode(), err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644} {
		if err := os.Chmod(key, mode); err != nil {
			t.Fatal(err)
		}
		err := run(context.Background(), []string{"admin", "org", "create", "--name", "Shop", "--db", db}, &out, &logs)
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "chmod 600 "+key) {
			t.Errorf("key file mode %o: %v, want a refusal naming the file and the chmod", mode, err)
		}
	}
	os.Chmod(key, 0o400)
	if err := run(context.Background(), []string{"admin", "org", "create", "--name", "Shop", "--db", db}, &out, &logs); err != nil {
		t.Fatalf("key file mode 400: %v", err)
	}
}

// TestSQLiteFilesOwnerOnly: the database and its -wal and -shm files are
// created readable by their owner only, whatever the umask lets through.
func TestSQLiteFilesOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	db := filepath.Join(t.TempDir(), "payd.db")
	store, err := openStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := sandbox.NewSQLStore(store).GetSandboxPayment(context.Background(), "org", "bkash", "X"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatal(err)
	}
	for _, name := range []string{db, db + "-wal", db + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", filepath.Base(name), fi.Mode().Perm())
		}
	}
}
