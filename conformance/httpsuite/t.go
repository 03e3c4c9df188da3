package httpsuite

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// T is what the suite needs of a test: the subset of testing.TB it uses,
// with a Run whose subtests are T again. Testing adapts a *testing.T;
// Reporter runs the suite outside go test and prints one line per check.
//
// As with testing.T, Fatalf and Skipf end the calling check at once and
// must be called from the goroutine running it.
type T interface {
	Name() string
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Failed() bool
	Cleanup(func())
	// Context is canceled when the check ends, before its Cleanup
	// functions run.
	Context() context.Context
	// Run runs f as a subtest named name and reports whether it passed
	// (or was skipped).
	Run(name string, f func(T)) bool
}

// Testing adapts t to T, for running the suite under go test.
func Testing(t *testing.T) T { return testingT{t} }

type testingT struct{ *testing.T }

func (t testingT) Run(name string, f func(T)) bool {
	return t.T.Run(name, func(t *testing.T) { f(testingT{t}) })
}

// Reporter runs checks outside go test: each check (a T with its
// subtests) prints one PASS, FAIL or SKIP line when it ends, its log and
// errors indented below a FAIL (and below every line when Verbose). It is
// what `payd conformance` uses.
type Reporter struct {
	// Verbose prints the log of passing checks too.
	Verbose bool
	// Context is the parent of every check's context (default
	// context.Background()): canceling it cancels the checks' requests.
	Context context.Context

	w                    io.Writer
	mu                   sync.Mutex
	passed, failed, skip int
}

// NewReporter returns a Reporter printing to w.
func NewReporter(w io.Writer) *Reporter { return &Reporter{w: w} }

// Run runs f as a top-level check named name and reports whether it
// passed (or was skipped).
func (r *Reporter) Run(name string, f func(T)) bool {
	return r.run(nil, name, f)
}

// Counts returns how many leaf checks (those without subtests) passed,
// failed and were skipped so far.
func (r *Reporter) Counts() (passed, failed, skipped int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.passed, r.failed, r.skip
}

// Summary prints the counts and returns whether nothing failed.
func (r *Reporter) Summary() bool {
	p, f, s := r.Counts()
	result := "PASS"
	if f > 0 {
		result = "FAIL"
	}
	fmt.Fprintf(r.w, "%s: %d checks passed, %d failed, %d skipped\n", result, p, f, s)
	return f == 0
}

func (r *Reporter) run(parent *check, name string, f func(T)) bool {
	name = strings.ReplaceAll(name, " ", "_")
	full := name
	if parent != nil {
		full = parent.name + "/" + name
		parent.mu.Lock()
		parent.hasSubs = true
		parent.mu.Unlock()
	}
	ctx := r.Context
	if parent != nil {
		ctx = parent.ctx
	} else if ctx == nil {
		ctx = context.Background()
	}
	c := &check{r: r, parent: parent, name: full}
	c.ctx, c.cancel = context.WithCancel(ctx)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				c.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		f(c)
	}()
	<-done
	c.cancel()
	c.runCleanups()
	c.report(time.Since(start))
	if c.Failed() && parent != nil {
		parent.markFailed()
	}
	return !c.Failed()
}

// check is the T of one Reporter check.
type check struct {
	r      *Reporter
	parent *check
	name   string
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	failed     bool
	skipped    bool
	skipReason string
	hasSubs    bool
	log        []string
	cleanups   []func()
}

func (c *check) Name() string             { return c.name }
func (c *check) Helper()                  {}
func (c *check) Context() context.Context { return c.ctx }

func (c *check) Logf(format string, args ...any) { c.addLog(fmt.Sprintf(format, args...)) }

func (c *check) Errorf(format string, args ...any) {
	c.addLog(fmt.Sprintf(format, args...))
	c.markFailed()
}

func (c *check) Fatalf(format string, args ...any) {
	c.Errorf(format, args...)
	runtime.Goexit()
}

func (c *check) Skipf(format string, args ...any) {
	c.mu.Lock()
	c.skipped, c.skipReason = true, fmt.Sprintf(format, args...)
	c.mu.Unlock()
	runtime.Goexit()
}

func (c *check) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

func (c *check) Cleanup(f func()) {
	c.mu.Lock()
	c.cleanups = append(c.cleanups, f)
	c.mu.Unlock()
}

func (c *check) Run(name string, f func(T)) bool { return c.r.run(c, name, f) }

func (c *check) addLog(s string) {
	c.mu.Lock()
	c.log = append(c.log, s)
	c.mu.Unlock()
}

func (c *check) markFailed() {
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

// runCleanups runs the Cleanup functions last added first, each on a
// goroutine of its own so that a Fatalf in one ends only that one.
func (c *check) runCleanups() {
	c.mu.Lock()
	fs := c.cleanups
	c.cleanups = nil
	c.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() {
				if p := recover(); p != nil {
					c.Errorf("panic in cleanup: %v", p)
				}
			}()
			fs[i]()
		}()
		<-done
	}
}

func (c *check) report(d time.Duration) {
	c.mu.Lock()
	failed, skipped, reason, leaf, log := c.failed, c.skipped, c.skipReason, !c.hasSubs, c.log
	c.mu.Unlock()
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	status := "PASS"
	switch {
	case failed:
		status = "FAIL"
	case skipped:
		status = "SKIP"
	}
	if leaf {
		switch status {
		case "PASS":
			r.passed++
		case "FAIL":
			r.failed++
		case "SKIP":
			r.skip++
		}
	}
	if !leaf && status == "PASS" && !r.Verbose {
		return // a group whose checks all passed: its lines said it
	}
	line := fmt.Sprintf("--- %s: %s (%.2fs)", status, c.name, d.Seconds())
	if skipped && !failed {
		line += ": " + reason
	}
	fmt.Fprintln(r.w, line)
	if failed || r.Verbose {
		for _, l := range log {
			fmt.Fprintln(r.w, "    "+strings.ReplaceAll(l, "\n", "\n    "))
		}
	}
}
