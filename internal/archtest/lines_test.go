package archtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// createTable finds the tables a migration creates.
var createTable = regexp.MustCompile(`(?i)\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)`)

// providerLines returns each provider's migration folders by dialect:
// provider/<name>/migrations/<dialect>.
func providerLines(t *testing.T) map[string]map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..", "provider")
	dirs, err := filepath.Glob(filepath.Join(root, "*", "migrations", "*"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]map[string][]string{}
	for _, dir := range dirs {
		provider := filepath.Base(filepath.Dir(filepath.Dir(dir)))
		files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil {
			t.Fatal(err)
		}
		if lines[provider] == nil {
			lines[provider] = map[string][]string{}
		}
		lines[provider][filepath.Base(dir)] = files
	}
	return lines
}

// TestStorageKnowsNoProvider holds the plug-in rule of ARCHITECTURE.md:
// adding or removing a provider touches no file under storage/. A
// provider's tables are created by its own migration line only, and no
// file under storage/ (code, test, migration) names one of them or
// imports a provider.
func TestStorageKnowsNoProvider(t *testing.T) {
	tables := map[string]string{} // table -> provider
	for provider, dialects := range providerLines(t) {
		for _, files := range dialects {
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range createTable.FindAllStringSubmatch(string(b), -1) {
					tables[strings.ToLower(m[1])] = provider
				}
			}
		}
	}
	for _, want := range []string{"sandbox_payments", "sandbox_payouts", "sms_devices", "sms_messages", "manual_payouts"} {
		if tables[want] == "" {
			t.Errorf("no provider's migrations create %s: the rule would check nothing", want)
		}
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, regexp.QuoteMeta(name))
	}
	slices.Sort(names)
	mention := regexp.MustCompile(`(?i)\b(` + strings.Join(names, "|") + `)\b`)
	storage := filepath.Join("..", "..", "storage")
	err := filepath.WalkDir(storage, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		if m := mention.FindString(text); m != "" {
			t.Errorf("%s names %s, a table of provider %s: the provider's own migrations and SQL keep it", path, m, tables[strings.ToLower(m)])
		}
		if strings.Contains(text, `"`+module+"/provider/") {
			t.Errorf("%s imports a provider", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProviderLinesAgree holds each provider's migration line to what a
// store's own is held to: the same numbers in every dialect, named
// NNNN_description.sql from 0001 with no gap.
func TestProviderLinesAgree(t *testing.T) {
	lines := providerLines(t)
	if len(lines) == 0 {
		t.Fatal("no provider has a migration line")
	}
	number := regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)
	for provider, dialects := range lines {
		var want []string
		for _, dialect := range []string{"sqlite", "postgres"} {
			files := dialects[dialect]
			if len(files) == 0 {
				t.Errorf("provider %s has no %s migrations", provider, dialect)
				continue
			}
			var got []string
			for i, f := range files {
				m := number.FindStringSubmatch(filepath.Base(f))
				if m == nil {
					t.Errorf("%s: want NNNN_description.sql", f)
					continue
				}
				if m[1] != fmt.Sprintf("%04d", i+1) {
					t.Errorf("%s: want version %d (numbers from 0001, no gap)", f, i+1)
				}
				got = append(got, m[1])
			}
			if want == nil {
				want = got
			} else if !slices.Equal(got, want) {
				t.Errorf("provider %s: %s versions %v, sqlite %v: want the same", provider, dialect, got, want)
			}
		}
		for dialect := range dialects {
			if dialect != "sqlite" && dialect != "postgres" {
				t.Errorf("provider %s: migrations for unknown dialect %q", provider, dialect)
			}
		}
	}
}
