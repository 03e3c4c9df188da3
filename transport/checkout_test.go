package transport

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"rsc.io/qr"
)

func TestCheckoutLanguage(t *testing.T) {
	for _, c := range []struct{ query, accept, want string }{
		{"", "", "en"},
		{"", "bn", "bn"},
		{"", "bn-BD,bn;q=0.9,en-US;q=0.8", "bn"},
		{"", "en-GB,en;q=0.9,bn;q=0.8", "en"},
		{"", "fr-FR,bn;q=0.5,en;q=0.4", "bn"},
		{"", "en;q=0.2, BN;q=0.7", "bn"},
		{"", "bn;q=0", "en"},
		{"", "bn;q=x", "en"},
		{"", "de, fr", "en"},
		{"lang=en", "bn", "en"},
		{"lang=bn", "en", "bn"},
		{"lang=fr", "bn", "bn"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/checkout/x?"+c.query, nil)
		if c.accept != "" {
			r.Header.Set("Accept-Language", c.accept)
		}
		if got := checkoutLanguage(r); got != c.want {
			t.Errorf("?%s Accept-Language %q: %s, want %s", c.query, c.accept, got, c.want)
		}
	}
}

// TestCheckoutTexts checks that both languages have every message, with
// the same formatting verbs, and that every message the template asks for
// exists.
func TestCheckoutTexts(t *testing.T) {
	verbs := regexp.MustCompile(`%(?:\[\d\])?[sd]`)
	count := func(f string) map[string]int {
		m := map[string]int{}
		for _, v := range verbs.FindAllString(f, -1) {
			m[v[len(v)-1:]]++
		}
		return m
	}
	for key, en := range checkoutText[langEnglish] {
		bn, ok := checkoutText[langBangla][key]
		if !ok {
			t.Errorf("no Bangla for %q", key)
			continue
		}
		if a, b := count(en), count(bn); len(a) != len(b) || a["s"] != b["s"] || a["d"] != b["d"] {
			t.Errorf("%q: English %q and Bangla %q take different arguments", key, en, bn)
		}
	}
	for key := range checkoutText[langBangla] {
		if _, ok := checkoutText[langEnglish][key]; !ok {
			t.Errorf("no English for %q", key)
		}
	}
	tmpl, err := checkoutFiles.ReadFile("web/checkout.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\.T "([a-z_]+)"`).FindAllStringSubmatch(string(tmpl), -1) {
		if _, ok := checkoutText[langEnglish][m[1]]; !ok {
			t.Errorf("the template asks for %q, which has no text", m[1])
		}
	}
	for _, prefix := range []string{"st_", "fc_", "op_", "err_"} {
		n := 0
		for key := range checkoutText[langEnglish] {
			if strings.HasPrefix(key, prefix) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no %s* texts", prefix)
		}
	}
	if got := translate(langBangla, "step2", "750.50", "01711000001"); got != "01711000001 নম্বরে ঠিক 750.50 টাকা পাঠান।" {
		t.Errorf("step2 in Bangla: %q", got)
	}
	if got := translate("xx", "no_such_key"); got != "no_such_key" {
		t.Errorf("a missing key: %q", got)
	}
}

func TestReturnURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://shop.example/return", "https://shop.example/return?deposit_id=dep_1&status=succeeded"},
		{"https://shop.example/r?order=7&x=a%20b", "https://shop.example/r?order=7&x=a%20b&deposit_id=dep_1&status=succeeded"},
		{"https://shop.example/r?order=7#done", "https://shop.example/r?order=7&deposit_id=dep_1&status=succeeded#done"},
	} {
		if got := returnURL(c.in, "dep_1", "succeeded"); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
}

func TestFormatRemaining(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", -time.Second: "0:00", 59 * time.Second: "0:59", 15 * time.Minute: "15:00",
		time.Hour + 2*time.Minute + 3*time.Second: "1:02:03",
	} {
		if got := formatRemaining(d); got != want {
			t.Errorf("%s: %q, want %q", d, got, want)
		}
	}
}

// TestQRSVG checks the SVG against the encoder's own module grid: every
// dark module is drawn, no light one is, with a quiet zone around.
func TestQRSVG(t *testing.T) {
	payload := "00020101021126380010bd.bkash01110171100000152045999530305054005802BD5909Agent Rahim6005Dhaka6304ABCD"
	svg, err := qrSVG(payload)
	if err != nil {
		t.Fatal(err)
	}
	code, err := qr.Encode(payload, qr.M)
	if err != nil {
		t.Fatal(err)
	}
	n := code.Size + 2*qrQuietZone
	s := string(svg)
	if !strings.HasPrefix(s, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 `) || !strings.HasSuffix(s, `"/></svg>`) {
		t.Fatalf("svg %.120s", s)
	}
	drawn := make([][]bool, n)
	for i := range drawn {
		drawn[i] = make([]bool, n)
	}
	for _, m := range regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`).FindAllStringSubmatch(s, -1) {
		var x, y, w int
		mustAtoi := func(s string) int {
			var v int
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		x, y, w = mustAtoi(m[1]), mustAtoi(m[2]), mustAtoi(m[3])
		if w != mustAtoi(m[4]) {
			t.Fatalf("a run that does not close: %s", m[0])
		}
		for i := range w {
			drawn[y][x+i] = true
		}
	}
	for y := range n {
		for x := range n {
			inside := x >= qrQuietZone && y >= qrQuietZone && x < n-qrQuietZone && y < n-qrQuietZone
			want := inside && code.Black(x-qrQuietZone, y-qrQuietZone)
			if drawn[y][x] != want {
				t.Fatalf("module (%d,%d): drawn %v, want %v", x, y, drawn[y][x], want)
			}
		}
	}
	// The three finder patterns of a QR code: 7x7 dark rings.
	for _, corner := range [][2]int{{0, 0}, {code.Size - 7, 0}, {0, code.Size - 7}} {
		for i := range 7 {
			if !code.Black(corner[0]+i, corner[1]) || !code.Black(corner[0], corner[1]+i) {
				t.Fatalf("no finder pattern at %v", corner)
			}
		}
	}
	if strings.Contains(s, "Agent") {
		t.Fatal("the payload leaked into the markup")
	}
}

// TestOpenAPIServedPrefix checks that the served document names the prefix
// the request came in under, also behind http.StripPrefix.
func TestOpenAPIServedPrefix(t *testing.T) {
	for _, c := range []struct {
		prefix, mount, path, want string
	}{
		{"/api", "", "/api/openapi.json", "/api"},
		{"", "", "/openapi.json", "/"},
		{"/payments/api", "", "/payments/api/openapi.json", "/payments/api"},
		{"/api", "/shop", "/shop/api/openapi.json", "/shop/api"},
	} {
		var h http.Handler = NewHandler(Config{Prefix: c.prefix})
		if c.mount != "" {
			h = http.StripPrefix(c.mount, h)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, rec.Code, rec.Body)
		}
		var doc struct {
			OpenAPI string `json:"openapi"`
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
			Paths map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != c.want || len(doc.Paths) == 0 {
			t.Fatalf("%s: %+v", c.path, doc)
		}
	}
	rec := httptest.NewRecorder()
	NewHandler(Config{Prefix: "/api"}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/openapi.json", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}
