// Package doccheck holds the tests that keep payd's documentation true for
// a reader who has only the repository: no path of someone's development
// machine, no pointer into an issue tracker the repository does not carry,
// and (in commands_test.go) every command a page marks as runnable runs.
package doccheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// machinePath matches an absolute path that exists only on one developer's
// machine: a home, a temporary or a work directory. A reader's machine has
// none of them, so a doc that names one is a command that cannot be pasted
// or a pointer that leads nowhere; docs build into the checkout or into a
// `mktemp -d` directory instead.
var machinePath = regexp.MustCompile(`(?:^|[^\w.~/-])(/(?:home|Users|root|tmp|work|var/tmp|private/tmp)(?:/|\b)|[A-Z]:\\Users\\)`)

// trackerRef matches a reference to an issue by its number ("issue 18",
// "Issue #7"). The tracker is not in the repository, so such a comment
// explains nothing to whoever reads the code: a comment says why itself.
var trackerRef = regexp.MustCompile(`(?i)\bissues? ?#?[0-9]+`)

// walk calls f with the slash-separated path (from the root) of every file
// of the repository with one of the suffixes, skipping .git and the
// binding spec, which is a verbatim copy payd does not edit.
func walk(t *testing.T, f func(rel, path string), suffixes ...string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == filepath.ToSlash(filepath.Join("docs", "spec")) || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return fs.SkipDir
			}
			return nil
		}
		for _, s := range suffixes {
			if strings.HasSuffix(rel, s) {
				f(rel, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoMachinePathInDocs: no Markdown file names a directory of a
// development machine.
func TestNoMachinePathInDocs(t *testing.T) {
	n := 0
	walk(t, func(rel, path string) {
		n++
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := machinePath.FindStringSubmatch(line); m != nil {
				t.Errorf("%s:%d names %q, a path of one machine: build into the checkout or a `mktemp -d` directory", rel, i+1, m[1])
			}
		}
	}, ".md")
	if n < 10 {
		t.Fatalf("found only %d Markdown files: the walk checks nothing", n)
	}
}

// TestCommentsSayWhy: no comment of non-test Go code, and no comment of a
// migration, points into an issue tracker or names a machine's path.
func TestCommentsSayWhy(t *testing.T) {
	check := func(rel string, line int, text string) {
		if m := trackerRef.FindString(text); m != "" {
			t.Errorf("%s:%d: %q points into an issue tracker outside the repository: say the reason in the comment", rel, line, m)
		}
		if m := machinePath.FindStringSubmatch(text); m != nil {
			t.Errorf("%s:%d names %q, a path of one machine", rel, line, m[1])
		}
	}
	goFiles := 0
	walk(t, func(rel, path string) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		goFiles++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				for i, l := range strings.Split(c.Text, "\n") {
					check(rel, fset.Position(c.Slash).Line+i, l)
				}
			}
		}
	}, ".go")
	sqlFiles := 0
	walk(t, func(rel, path string) {
		sqlFiles++
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if _, comment, ok := strings.Cut(l, "--"); ok {
				check(rel, i+1, comment)
			}
		}
	}, ".sql")
	if goFiles < 100 || sqlFiles < 20 {
		t.Fatalf("found only %d Go and %d SQL files: the walk checks nothing", goFiles, sqlFiles)
	}
}

// TestPatterns: the two patterns catch what they are for and leave alone
// what only looks like it (API paths, URLs, words that begin alike).
func TestPatterns(t *testing.T) {
	for _, s := range []string{
		"go build -o /tmp/payd ./cmd/payd", "cd /work/main", "(`/work/shared/spec`)",
		"/home/dev/payd", "/Users/ana/src", "--db /root/payd.db", "cd /tmp", `C:\Users\ana`,
	} {
		if !machinePath.MatchString(s) {
			t.Errorf("machinePath misses %q", s)
		}
	}
	for _, s := range []string{
		"/api/v1/deposits", "https://example.com/work/x", "/console/workers", "/usr/lib/postgresql/15/bin",
		"./tmp/x", "$(mktemp -d)/payd", "templates/tmpl", "/checkout/token",
	} {
		if machinePath.MatchString(s) {
			t.Errorf("machinePath matches %q", s)
		}
	}
	for _, s := range []string{"issue 18", "Issue #7", "(issue 19)", "issues 15"} {
		if !trackerRef.MatchString(s) {
			t.Errorf("trackerRef misses %q", s)
		}
	}
	for _, s := range []string{"an issue of 18 BDT", "issued 3 keys", "tissue 4"} {
		if trackerRef.MatchString(s) {
			t.Errorf("trackerRef matches %q", s)
		}
	}
}

// mdLink is a Markdown link or image target: ](target) or ](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestLinksResolve: every relative link of a Markdown file names a file or
// directory of the repository, and its #fragment a heading of that page,
// so that moving a section between pages cannot leave a reader at a dead
// end.
func TestLinksResolve(t *testing.T) {
	headings := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if h, ok := headings[path]; ok {
			return h
		}
		h := map[string]bool{}
		b, err := os.ReadFile(path)
		if err == nil {
			fence := false
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "```") {
					fence = !fence
				}
				if !fence && strings.HasPrefix(line, "#") {
					h[slug(strings.TrimLeft(line, "#"))] = true
				}
			}
		}
		headings[path] = h
		return h
	}
	walk(t, func(rel, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d links to %s, which does not exist", rel, i+1, target)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
					t.Errorf("%s:%d links to %s, a heading that page does not have", rel, i+1, target)
				}
			}
		}
	}, ".md")
}

// slug is GitHub's anchor of a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestREADMEShape: the README stays a page a newcomer skims (at most about
// 300 lines; the rest lives in docs/), and its test command is exactly the
// one CI runs, so "CI passes" and "the README's command passes" mean the
// same.
func TestREADMEShape(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines: move a topic to a page under docs/ and link it", n)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(ci), "# The README's test command.\n")
	if !ok {
		t.Fatal(`.ci/run has no "# The README's test command." line before the command it runs`)
	}
	command, _, _ := strings.Cut(after, "\n")
	if !strings.Contains(readme, "```sh\ngo run ./cmd/payd serve\n"+command+"\n```") {
		t.Errorf("the README's two commands are not `go run ./cmd/payd serve` and .ci/run's %q", command)
	}
}
