// Package pgtest gives tests a database of their own on the PostgreSQL
// server named by PAYD_TEST_POSTGRES_URL, so that any package can test
// against storage/postgres without sharing state.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the admin URL of the test server: a superuser (or a role
// with CREATEDB) on any database, such as
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
const EnvVar = "PAYD_TEST_POSTGRES_URL"

// SkipMessage is what a test says when EnvVar is not set.
const SkipMessage = EnvVar + " is not set: skipping Postgres tests"

// AdminURL returns the URL in EnvVar, skipping t if it is not set.
func AdminURL(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvVar)
	if admin == "" {
		t.Skip(SkipMessage)
	}
	return admin
}

// URL creates a new, empty database payd_test_<random> on the server in
// EnvVar and returns a URL of it, with the admin URL's credentials and
// parameters. The database is dropped (WITH (FORCE), so connections left
// open do not stop it) when the test and its subtests end. t is skipped if
// EnvVar is not set.
func URL(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	name := "payd_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec(ctx, admin, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, admin, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := WithDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// WithDatabase returns connString (a URL or a key=value connection string)
// naming database instead of the one it names.
func WithDatabase(connString, database string) (string, error) {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", EnvVar, err)
		}
		u.Path = "/" + database
		u.RawPath = ""
		// A dbname parameter would override the path.
		q := u.Query()
		if q.Has("dbname") {
			q.Set("dbname", database)
			u.RawQuery = q.Encode()
		}
		return u.String(), nil
	}
	// key=value: a later key overrides an earlier one.
	return strings.TrimSpace(connString) + " dbname=" + database, nil
}

// exec runs one statement on a connection of its own.
func exec(ctx context.Context, connString, sql string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
