package httpsuite

import (
	"strings"
	"testing"
)

func TestReporter(t *testing.T) {
	var out strings.Builder
	r := NewReporter(&out)
	var cleaned []string
	ok := r.Run("suite", func(t T) {
		t.Cleanup(func() { cleaned = append(cleaned, "suite") })
		t.Run("pass", func(t T) { t.Logf("hidden unless failing") })
		t.Run("error", func(t T) {
			t.Errorf("first %d", 1)
			t.Errorf("second")
		})
		t.Run("fatal", func(t T) {
			t.Cleanup(func() { cleaned = append(cleaned, "fatal") })
			t.Fatalf("stop here")
			t.Errorf("never reached")
		})
		t.Run("skip", func(t T) { t.Skipf("no %s", "sandbox") })
		t.Run("panic", func(t T) { panic("boom") })
		t.Run("group", func(t T) {
			t.Run("inner", func(t T) {
				if t.Context().Err() != nil {
					t.Errorf("context ended early")
				}
			})
		})
	})
	if ok {
		t.Error("Run reported success despite failing checks")
	}
	if p, f, s := r.Counts(); p != 2 || f != 3 || s != 1 {
		t.Errorf("counts passed %d failed %d skipped %d, want 2, 3, 1", p, f, s)
	}
	if strings.Join(cleaned, ",") != "fatal,suite" {
		t.Errorf("cleanups ran %v, want fatal then suite", cleaned)
	}
	got := out.String()
	for _, want := range []string{
		"--- PASS: suite/pass", "--- FAIL: suite/error", "    first 1\n    second\n",
		"--- FAIL: suite/fatal", "    stop here\n", "--- SKIP: suite/skip (", "): no sandbox",
		"--- FAIL: suite/panic", "panic: boom", "--- PASS: suite/group/inner", "--- FAIL: suite (",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"never reached", "hidden unless failing", "--- PASS: suite/group "} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, got)
		}
	}
	if r.Summary() {
		t.Error("Summary reported success")
	}
	if !strings.Contains(out.String(), "FAIL: 2 checks passed, 3 failed, 1 skipped") {
		t.Errorf("summary line missing:\n%s", out.String())
	}
}
