package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A minimal client of the W3C WebDriver protocol, enough to drive headless
// Chromium through ChromeDriver with net/http: no dependency.

// webElementKey names an element reference in WebDriver's JSON.
const webElementKey = "element-6066-11e4-a52e-4f735466cecf"

// findBrowser returns the Chromium and ChromeDriver binaries, or skips the
// test saying how to install them. PAYD_CHROMIUM and PAYD_CHROMEDRIVER
// override the search.
func findBrowser(t *testing.T) (chromium, driver string) {
	t.Helper()
	look := func(env string, names ...string) string {
		if p := os.Getenv(env); p != "" {
			return p
		}
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		return ""
	}
	chromium = look("PAYD_CHROMIUM", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
	driver = look("PAYD_CHROMEDRIVER", "chromedriver")
	if chromium == "" || driver == "" {
		t.Skipf("browser test skipped: no Chromium (%q) or ChromeDriver (%q) found; install them with "+
			"`apt-get install -y chromium chromium-driver` (Debian), or set PAYD_CHROMIUM and PAYD_CHROMEDRIVER", chromium, driver)
	}
	return chromium, driver
}

// browser is one WebDriver session of a headless Chromium.
type browser struct {
	t       *testing.T
	base    string // ChromeDriver's URL
	session string
	hc      *http.Client
}

// startBrowser starts ChromeDriver on a free loopback port and opens a
// session of a headless Chromium with a fresh profile, sized like a phone.
// Both are stopped when the test ends.
func startBrowser(t *testing.T, chromium, driver string) *browser {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	logFile, err := os.Create(filepath.Join(t.TempDir(), "chromedriver.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", driver, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
	})
	b := &browser{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), hc: &http.Client{Timeout: 60 * time.Second}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status struct {
			Ready bool `json:"ready"`
		}
		if err := b.call(http.MethodGet, "/status", nil, &status); err == nil && status.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not become ready (log: %s)", logFile.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
	profile := t.TempDir()
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			"args": []string{
				"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
				"--disable-component-update", "--no-first-run", "--user-data-dir=" + profile,
				"--disable-dev-shm-usage", "--window-size=412,915", "--lang=en-US",
			},
		},
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(http.MethodPost, "/session", caps, &created); err != nil {
		t.Fatalf("new session: %v (chromedriver log: %s)", err, logFile.Name())
	}
	b.session = created.SessionID
	t.Cleanup(func() { _ = b.call(http.MethodDelete, "/session/"+b.session, nil, nil) })
	return b
}

// call makes one WebDriver request and decodes its "value" into out.
func (b *browser) call(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(buf)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := b.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, env.Value)
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

func (b *browser) do(method, path string, in, out any) {
	b.t.Helper()
	if err := b.call(method, "/session/"+b.session+path, in, out); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) open(url string) {
	b.t.Helper()
	b.do(http.MethodPost, "/url", map[string]string{"url": url}, nil)
}

func (b *browser) currentURL() string {
	b.t.Helper()
	var u string
	b.do(http.MethodGet, "/url", nil, &u)
	return u
}

// find returns the element matching a CSS selector, or "" if none does.
func (b *browser) find(css string) string {
	b.t.Helper()
	var els []map[string]string
	b.do(http.MethodPost, "/elements", map[string]string{"using": "css selector", "value": css}, &els)
	if len(els) == 0 {
		return ""
	}
	return els[0][webElementKey]
}

// must returns the element matching css, failing the test if there is none.
func (b *browser) must(css string) string {
	b.t.Helper()
	el := b.find(css)
	if el == "" {
		b.t.Fatalf("no element %q on %s; page:\n%s", css, b.currentURL(), b.text("body"))
	}
	return el
}

// waitFor polls until an element matches css.
func (b *browser) waitFor(css string, timeout time.Duration) string {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if el := b.find(css); el != "" {
			return el
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no %q within %s on %s; page:\n%s", css, timeout, b.currentURL(), b.text("body"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *browser) text(css string) string {
	b.t.Helper()
	el := b.find(css)
	if el == "" {
		return ""
	}
	var s string
	b.do(http.MethodGet, "/element/"+el+"/text", nil, &s)
	return s
}

func (b *browser) attr(css, name string) string {
	b.t.Helper()
	var s *string
	b.do(http.MethodGet, "/element/"+b.must(css)+"/attribute/"+name, nil, &s)
	if s == nil {
		return ""
	}
	return *s
}

func (b *browser) typeInto(css, text string) {
	b.t.Helper()
	el := b.must(css)
	b.do(http.MethodPost, "/element/"+el+"/clear", map[string]any{}, nil)
	b.do(http.MethodPost, "/element/"+el+"/value", map[string]string{"text": text}, nil)
}

func (b *browser) click(css string) {
	b.t.Helper()
	b.do(http.MethodPost, "/element/"+b.must(css)+"/click", map[string]any{}, nil)
}

// submit clicks an element that loads a new page (a form button, a link)
// and waits until the new page has loaded, so that nothing is looked up on
// the old one.
func (b *browser) submit(css string) {
	b.t.Helper()
	b.script("window.__paydOldPage = true")
	b.click(css)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var loaded bool
		err := b.call(http.MethodPost, "/session/"+b.session+"/execute/sync", map[string]any{
			"script": "return window.__paydOldPage === undefined && document.readyState === 'complete'", "args": []any{},
		}, &loaded)
		if err == nil && loaded {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no new page after clicking %q (last error: %v)", css, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// script runs JavaScript in the page (WebDriver's own, not subject to the
// page's CSP) and returns its result.
func (b *browser) script(js string) any {
	b.t.Helper()
	var out any
	b.do(http.MethodPost, "/execute/sync", map[string]any{"script": js, "args": []any{}}, &out)
	return out
}

// screenshot saves a PNG of the viewport at path.
func (b *browser) screenshot(path string) {
	b.t.Helper()
	var data string
	b.do(http.MethodGet, "/screenshot", nil, &data)
	png, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		b.t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		b.t.Fatalf("screenshot is not a PNG")
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// fullHeight resizes the window to the page's height, so a screenshot
// shows the whole page, and returns a function that restores it.
func (b *browser) fullHeight() func() {
	b.t.Helper()
	var h float64
	b.do(http.MethodPost, "/execute/sync", map[string]any{
		"script": "return document.documentElement.scrollHeight", "args": []any{},
	}, &h)
	var rect struct{ Width, Height float64 }
	b.do(http.MethodGet, "/window/rect", nil, &rect)
	b.do(http.MethodPost, "/window/rect", map[string]any{"width": int(rect.Width), "height": int(h) + 140}, nil)
	return func() {
		b.do(http.MethodPost, "/window/rect", map[string]any{"width": int(rect.Width), "height": int(rect.Height)}, nil)
	}
}

// hasText reports whether the page's visible text contains s.
func (b *browser) hasText(s string) bool {
	b.t.Helper()
	return strings.Contains(b.text("body"), s)
}
