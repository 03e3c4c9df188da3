package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	for _, want := range append(allScenarios, "store: bare 3-statement tx", "net/http: bare JSON handler", "payd peak RSS", "signed H2H create / bare store transaction", "verify, per deposit: create") {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
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
