package doccheck

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// A page marks what its commands promise with an HTML comment (invisible
// on GitHub) on the line before a fenced block:
//
//	<!-- ci: run -->         the next ```sh block runs, in order with the
//	                         page's other blocks, in one bash session
//	<!-- ci: background -->  the next ```sh block is a server (another
//	                         terminal, for a reader): it runs in the
//	                         background, and the page goes on once it logs
//	                         "listening"
//	<!-- ci: output -->      the next ```text block is what the block run
//	                         before it prints: each of its lines matches a
//	                         line of that output, in order, "..." matching
//	                         anything
//	<!-- ci: run postgres -->
//	                         as run, with $DB the URL of a new PostgreSQL
//	                         database of the page's own (the page is
//	                         skipped without PAYD_TEST_POSTGRES_URL)
//	<!-- ci: go Example_x file_test.go -->
//	                         every code line of the next ```go block is a line
//	                         of that compiled example (or function), in the
//	                         same order; with * for the name, a line of
//	                         that file anywhere
//
// Each page runs in a new temporary directory that stands in for the
// checkout, with payd and the example programs built into it beforehand:
// a page's `go build -o payd ./cmd/payd` is then already done, and its
// `go run ./examples/x` runs the built ./x. Every 127.0.0.1 or localhost
// port a page names becomes a free one, the same throughout the page (and
// payd serve's default, 8080, through PAYD_ADDR).
var marker = regexp.MustCompile(`^ *<!-- ci: (run|background|output|go (\w+|\*) (\S+))( postgres)? -->$`)

// block is one marked fenced block of a page.
type block struct {
	kind string // run, background, output, go
	line int    // of the fence, 1-based
	text string
	// for go: the example and its file
	example, file string
	// postgres: the block needs a PostgreSQL database, whose URL it finds
	// in $DB
	postgres bool
}

// markedBlocks returns the marked blocks of the Markdown file at path.
func markedBlocks(t *testing.T, rel, path string) []block {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		m := marker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		kind := m[1]
		want := "```sh"
		switch {
		case kind == "output":
			want = "```text"
		case strings.HasPrefix(kind, "go "):
			kind, want = "go", "```go"
		}
		// A block in a list item is indented as its marker is.
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))]
		if i+1 >= len(lines) || lines[i+1] != indent+want {
			t.Errorf("%s:%d: a %q marker must be followed by a %s block", rel, i+1, kind, want)
			continue
		}
		end := i + 2
		for end < len(lines) && lines[end] != indent+"```" {
			end++
		}
		if end == len(lines) {
			t.Errorf("%s:%d: the block never ends", rel, i+2)
			continue
		}
		var text []string
		for _, l := range lines[i+2 : end] {
			text = append(text, strings.TrimPrefix(l, indent))
		}
		out = append(out, block{kind: kind, line: i + 2, text: strings.Join(text, "\n"), example: m[2], file: m[3], postgres: m[4] != ""})
		i = end
	}
	return out
}

// TestDocsGoBlocksAreExamples: the Go code a page shows is a compiled, tested
// example's, line for line (the README leaves out its error checks).
func TestDocsGoBlocksAreExamples(t *testing.T) {
	n := 0
	walk(t, func(rel, path string) {
		for _, b := range markedBlocks(t, rel, path) {
			if b.kind != "go" {
				continue
			}
			n++
			src, err := os.ReadFile(filepath.Join(filepath.Dir(path), filepath.FromSlash(b.file)))
			if err != nil {
				t.Errorf("%s:%d: %v", rel, b.line, err)
				continue
			}
			if b.example == "*" {
				all := fileLines(string(src))
				for k, l := range strings.Split(b.text, "\n") {
					if l = strings.TrimSpace(l); l != "" && !all[l] {
						t.Errorf("%s:%d: %q is not a line of %s", rel, b.line+k, l, b.file)
					}
				}
				continue
			}
			body := exampleBody(string(src), b.example)
			if body == nil {
				t.Errorf("%s:%d: %s has no func %s", rel, b.line, b.file, b.example)
				continue
			}
			j := 0
			for k, l := range strings.Split(b.text, "\n") {
				l = strings.TrimSpace(l)
				if l == "" || strings.HasPrefix(l, "//") {
					continue // a page may say more than the example's comments
				}
				for j < len(body) && body[j] != l {
					j++
				}
				if j == len(body) {
					t.Errorf("%s:%d: %q is not a line of %s in %s (or not in its order)", rel, b.line+k, l, b.example, b.file)
					break
				}
				j++
			}
		}
	}, ".md")
	if n == 0 {
		t.Fatal("no page shows a Go example: the README's should be marked")
	}
}

// exampleBody returns the trimmed lines of func (or method) name in src.
func exampleBody(src, name string) []string {
	loc := regexp.MustCompile(`\nfunc (\([^)]*\) )?` + regexp.QuoteMeta(name) + `\(`).FindStringIndex(src)
	if loc == nil {
		return nil
	}
	_, rest, ok := strings.Cut(src[loc[1]:], "{\n")
	if !ok {
		return nil
	}
	body, _, _ := strings.Cut(rest, "\n}\n")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// fileLines returns the trimmed lines of src, for a block that quotes lines
// of several functions of a file (marked with the name "*").
func fileLines(src string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(src, "\n") {
		out[strings.TrimSpace(l)] = true
	}
	return out
}

// TestDocCommands runs every page's marked commands, as a reader pasting
// them would, against a payd built for the test: the sandbox provider on
// SQLite, in a temporary directory.
func TestDocCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds payd and runs servers: not in -short")
	}
	for _, tool := range []string{"bash", "curl", "jq", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the documented commands need %s, which is not installed", tool)
		}
	}
	type page struct {
		rel    string
		blocks []block
	}
	var pages []page
	walk(t, func(rel, path string) {
		bs := markedBlocks(t, rel, path)
		for _, b := range bs {
			if b.kind == "run" || b.kind == "background" {
				pages = append(pages, page{rel, bs})
				return
			}
		}
	}, ".md")
	for _, must := range []string{"README.md", "docs/tour.md"} {
		found := false
		for _, p := range pages {
			found = found || p.rel == must
		}
		if !found {
			t.Errorf("%s has no runnable commands marked: the check would not hold it", must)
		}
	}

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), "./cmd/payd", "./examples/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Pages mostly wait (for a server, a worker, a sandbox payout), so more
	// of them run at once than -parallel's default of one per core: each
	// has its own directory and ports.
	var wg sync.WaitGroup
	slots := make(chan struct{}, 6)
	for _, p := range pages {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(strings.TrimSuffix(p.rel, ".md"), func(t *testing.T) {
				runPage(t, bin, p.rel, p.blocks)
			})
		})
	}
	wg.Wait()
}

// sep starts each block's output, so that the output of one block can be
// told from another's.
const sep = "@@doccheck block "

// runPage runs one page's blocks in one bash session and checks the
// outputs the page shows.
func runPage(t *testing.T, bin, rel string, blocks []block) {
	work := t.TempDir()
	env := []string{"HOME=" + work}
	for _, b := range blocks {
		if b.postgres {
			// A database of the page's own, dropped when it ends; the page
			// is skipped without PAYD_TEST_POSTGRES_URL.
			env = append(env, "DB="+pgtest.URL(t))
			break
		}
	}
	built, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range built {
		if err := os.Link(filepath.Join(bin, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	// payd serve listens on 127.0.0.1:8080 unless told otherwise: that
	// port too is a free one.
	ports := map[string]string{"8080": freePort(t)}
	var script strings.Builder
	script.WriteString("set -eo pipefail\nexport PATH=\"$PWD:$PATH\"\n")
	for i, b := range blocks {
		text := localize(t, b.text, ports)
		switch b.kind {
		case "run":
			fmt.Fprintf(&script, "echo '%s%d'\n%s\n", sep, i, text)
		case "background":
			log := fmt.Sprintf(".background-%d.log", i)
			fmt.Fprintf(&script, "(\n%s\n) > %s 2>&1 &\n", text, log)
			fmt.Fprintf(&script, "for _ in $(seq 300); do grep -q listening %s && break; sleep 0.1; done\n", log)
			fmt.Fprintf(&script, "grep -q listening %s || { echo '%s:%d: the background block never logged \"listening\":' >&2; cat %s >&2; exit 1; }\n", log, rel, b.line, log)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(append(os.Environ(), env...), "PAYD_ADDR=127.0.0.1:"+ports["8080"])
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	// The page's servers are its background blocks: stop them as a reader
	// would with Ctrl-C, then whatever is left.
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	t.Logf("%s: %s", rel, time.Since(start).Round(time.Millisecond))
	if err != nil {
		logs, _ := filepath.Glob(filepath.Join(work, ".background-*.log"))
		var bg strings.Builder
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			fmt.Fprintf(&bg, "--- %s\n%s", filepath.Base(l), b)
		}
		t.Fatalf("%s: the commands failed: %v\nstdout:\n%s\nstderr:\n%s\n%s", rel, err, stdout.String(), stderr.String(), bg.String())
	}
	outputs := map[int]string{}
	var cur = -1
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), sep); ok {
			cur, _ = strconv.Atoi(n)
			continue
		}
		if cur >= 0 {
			outputs[cur] += sc.Text() + "\n"
		}
	}
	last := -1
	for i, b := range blocks {
		switch b.kind {
		case "run":
			last = i
		case "output":
			if last < 0 {
				t.Errorf("%s:%d: an output block with no run block before it", rel, b.line)
				continue
			}
			matchOutput(t, rel, b.line, localize(t, b.text, ports), outputs[last])
		}
	}
}

// goRunExample is a page's `go run ./examples/NAME`, which runs ./NAME.
var goRunExample = regexp.MustCompile(`go run \./examples/([a-z-]+)`)

// portRef is an address on this machine a page names.
var portRef = regexp.MustCompile(`\b(127\.0\.0\.1|localhost):([0-9]{2,5})\b`)

// localize gives each port a page names a free port of its own, the same
// one everywhere on the page, and stands the built binaries in for
// building them from the checkout.
func localize(t *testing.T, text string, ports map[string]string) string {
	text = portRef.ReplaceAllStringFunc(text, func(s string) string {
		host, port, _ := strings.Cut(s, ":")
		if ports[port] == "" {
			ports[port] = freePort(t)
		}
		return host + ":" + ports[port]
	})
	text = strings.ReplaceAll(text, "go build -o payd ./cmd/payd", ": built before the page ran")
	text = strings.ReplaceAll(text, "go run ./cmd/payd", "./payd")
	text = goRunExample.ReplaceAllString(text, "./$1")
	return text
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// matchOutput: every line of want matches a line of got, in order, "..."
// in want matching any text.
func matchOutput(t *testing.T, rel string, line int, want, got string) {
	t.Helper()
	gotLines := strings.Split(got, "\n")
	j := 0
	for k, w := range strings.Split(want, "\n") {
		w = strings.TrimRight(w, " ")
		if w == "" {
			continue
		}
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(w), regexp.QuoteMeta("..."), ".*") + "$")
		for j < len(gotLines) && !re.MatchString(strings.TrimRight(gotLines[j], " ")) {
			j++
		}
		if j == len(gotLines) {
			t.Errorf("%s:%d: the page shows\n\t%s\nbut the commands printed (from the block before it):\n%s", rel, line+k, w, got)
			return
		}
		j++
	}
}
