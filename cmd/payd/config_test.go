package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadEnvValues: a PAYD_* variable payd cannot parse is an error that
// names the variable and what is wrong with its value, and payd serve
// starts nothing (no database is created); it never falls back on the
// default in silence.
func TestBadEnvValues(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"PAYD_WORKER_CONCURRENCY", "eight", `PAYD_WORKER_CONCURRENCY="eight": not a whole number`},
		{"PAYD_CREATE_BATCH", "1.5", `PAYD_CREATE_BATCH="1.5": not a whole number`},
		{"PAYD_RATE_LIMIT", "fast", `PAYD_RATE_LIMIT="fast": not a number`},
		{"PAYD_RATE_LIMIT_VERIFY", "NaN", `PAYD_RATE_LIMIT_VERIFY="NaN": not a number`},
		{"PAYD_SMS_SILENCE", "5 minutes", `PAYD_SMS_SILENCE="5 minutes": not a duration such as 90s or 5m`},
		{"PAYD_SHUTDOWN_TIMEOUT", "20", `PAYD_SHUTDOWN_TIMEOUT="20": not a duration such as 90s or 5m`},
		{"PAYD_WEBHOOK_ALLOW_PRIVATE", "yes please", `PAYD_WEBHOOK_ALLOW_PRIVATE="yes please": not true or false`},
		{"PAYD_TRUSTED_PROXY", "proxy.lan", `PAYD_TRUSTED_PROXY="proxy.lan": "proxy.lan" is not an IP address or CIDR prefix`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			t.Setenv("PAYD_MASTER_KEY", "")
			db := filepath.Join(t.TempDir(), "payd.db")
			// A cancelled context: a serve that starts stops at once.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr bytes.Buffer
			err := run(ctx, []string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("payd serve with %s=%q: %v, want an error with %q", tc.name, tc.value, err, tc.want)
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a database was created: %v", err)
			}
		})
	}
	// An empty variable is as good as unset.
	t.Setenv("PAYD_WORKER_CONCURRENCY", "")
	if _, err := envInt("PAYD_WORKER_CONCURRENCY", 8); err != nil {
		t.Errorf("empty: %v", err)
	}
}
