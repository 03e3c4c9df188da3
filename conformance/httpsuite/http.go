package httpsuite

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The suite sends its own requests (besides the Go client's) so that it
// sees the exact bytes, status and headers of every answer, and signs them
// with its own implementation of the contract's canonical request rather
// than the server's signing package.

// request is one raw call of the API.
type request struct {
	method string
	path   string // below the base URL, e.g. "/v1/deposits"; may carry "?query"
	body   []byte // nil: no body
	org    *org   // whose API key (and signing secret) to use; nil sends none
	apiKey string // overrides the org's key ("" keeps it)
	sign   bool   // add signature headers

	secret     []byte // signs with this instead of the org's secret
	signTarget string // signs this request target instead of the one sent
	signBody   []byte // signs these bytes instead of the body sent
	signMethod string // signs this method instead of the one sent
	timestamp  string // sends this X-Service-Timestamp (and signs it)
	signature  string // sends this X-Service-Signature as is
	header     map[string]string
}

// response is a raw answer.
type response struct {
	status int
	header http.Header
	body   []byte
	json   any // the body decoded with json.Number, nil if not JSON
}

// object returns the body as a JSON object (nil if it is not one).
func (r *response) object() map[string]any {
	m, _ := r.json.(map[string]any)
	return m
}

func (r *response) String() string {
	b := r.body
	if len(b) > 600 {
		b = append(b[:600:600], "..."...)
	}
	return fmt.Sprintf("HTTP %d %s", r.status, b)
}

// errorCode and errorMessage dig into the error envelope.
func (r *response) errorCode() string    { return str(r.object()["error"], "code") }
func (r *response) errorMessage() string { return str(r.object()["error"], "message") }

// str returns v[key] when v is an object and that is a string.
func str(v any, key string) string {
	m, _ := v.(map[string]any)
	s, _ := m[key].(string)
	return s
}

// canonical is the contract's canonical request: five parts joined by
// "\n": "v1", the timestamp, the method, the request target, the body.
func canonical(timestamp, method, target string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("v1\n" + timestamp + "\n" + strings.ToUpper(method) + "\n" + target + "\n")
	b.Write(body)
	return b.Bytes()
}

// sign returns the X-Service-Signature value: "v1=" and the unpadded
// base64url HMAC-SHA256 of the canonical request.
func sign(secret []byte, timestamp, method, target string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(canonical(timestamp, method, target, body))
	return "v1=" + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// send sends r once per attempt, retrying (with a fresh signature) only
// when the server answers 429. It touches no T, so goroutines may call it.
func (s *suite) send(ctx context.Context, r request) (*response, error) {
	for attempt := 0; ; attempt++ {
		res, err := s.sendOnce(ctx, r)
		if err != nil || res.status != http.StatusTooManyRequests || attempt >= 5 {
			return res, err
		}
		wait := time.Second
		if secs, err := strconv.Atoi(res.header.Get("Retry-After")); err == nil && secs > 0 {
			wait = time.Duration(min(secs, 5)) * time.Second
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func (s *suite) sendOnce(ctx context.Context, r request) (*response, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, s.base+r.path, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "payd-httpsuite/1")
	key := r.apiKey
	if key == "" && r.org != nil {
		key = r.org.APIKey
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if r.sign {
		ts := r.timestamp
		if ts == "" {
			ts = strconv.FormatInt(time.Now().Unix(), 10)
		}
		secret := r.secret
		if secret == nil && r.org != nil {
			secret = []byte(r.org.SigningSecret)
		}
		target, method, signed := req.URL.RequestURI(), r.method, r.body
		if r.signTarget != "" {
			target = r.signTarget
		}
		if r.signMethod != "" {
			method = r.signMethod
		}
		if r.signBody != nil {
			signed = r.signBody
		}
		req.Header.Set("X-Service-Timestamp", ts)
		req.Header.Set("X-Service-Signature", sign(secret, ts, method, target, signed))
	} else if r.timestamp != "" {
		req.Header.Set("X-Service-Timestamp", r.timestamp)
	}
	if r.signature != "" {
		req.Header.Set("X-Service-Signature", r.signature)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	out := &response{status: res.StatusCode, header: res.Header, body: data}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && !dec.More() {
		out.json = v
	}
	return out, nil
}

// do sends r and ends the check if the request cannot be made. Every answer
// must be JSON with Content-Type application/json.
func (s *suite) do(t T, r request) *response {
	t.Helper()
	res, err := s.send(t.Context(), r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	checkJSONAnswer(t, r.method+" "+r.path, res)
	return res
}

func checkJSONAnswer(t T, what string, res *response) {
	t.Helper()
	if mt, _, _ := mime.ParseMediaType(res.header.Get("Content-Type")); mt != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json (%s)", what, res.header.Get("Content-Type"), res)
	}
	if res.json == nil {
		t.Errorf("%s: body is not one JSON value: %s", what, res)
	}
}

// fieldMessage is the `<field>: <reason>` shape of a 400 message.
var fieldMessage = regexp.MustCompile(`^([A-Za-z0-9_]+(?:\[[0-9]+\])?)(?:\.[A-Za-z0-9_]+(?:\[[0-9]+\])?)*: \S.*$`)

// authReasons are the messages of 401 answers.
var authReasons = map[string]bool{
	"missing_api_key": true, "invalid_api_key": true, "missing_signature": true,
	"malformed_signature": true, "invalid_signature": true, "stale_signature": true,
}

// expectError checks an error answer: the status, the exact envelope, the
// code, and the message: for 400 `<field>: <reason>` with the field
// starting with detail when given; for 401 exactly detail (one of the
// contract's reasons) when given.
func expectError(t T, what string, res *response, status int, code, detail string) {
	t.Helper()
	if res.status != status || res.errorCode() != code {
		t.Errorf("%s: got %s, want %d %s", what, res, status, code)
		return
	}
	checkShape(t, what, res.json, errorSchema)
	msg := res.errorMessage()
	switch status {
	case http.StatusBadRequest:
		if !fieldMessage.MatchString(msg) {
			t.Errorf("%s: message %q is not shaped `<field>: <reason>`", what, msg)
		} else if detail != "" && !strings.HasPrefix(msg, detail+": ") && !strings.HasPrefix(msg, detail+".") && !strings.HasPrefix(msg, detail+"[") {
			t.Errorf("%s: message %q does not name the field %s", what, msg, detail)
		}
	case http.StatusUnauthorized:
		if !authReasons[msg] {
			t.Errorf("%s: 401 message %q is not one of the contract's reasons", what, msg)
		} else if detail != "" && msg != detail {
			t.Errorf("%s: 401 message %q, want %q", what, msg, detail)
		}
	}
	if status == http.StatusTooManyRequests && res.header.Get("Retry-After") == "" {
		t.Errorf("%s: 429 without Retry-After", what)
	}
}

// expectStatus ends the check unless res has the status.
func expectStatus(t T, what string, res *response, status int) {
	t.Helper()
	if res.status != status {
		t.Fatalf("%s: got %s, want %d", what, res, status)
	}
}
