package paydtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport/signing"
)

// Org is an organization with its credentials.
type Org struct {
	ID, KeyID, APIKey, Secret string // its ID, its API key's ID, the key, and the key's signing secret
}

// NewOrg creates an organization (named "Shop" unless s names it).
func (s *Server) NewOrg(settings engine.OrganizationSettings) *Org {
	s.helper()
	if settings.Name == nil {
		name := "Shop"
		settings.Name = &name
	}
	creds, err := s.Engine.CreateOrganization(context.Background(), settings)
	if err != nil {
		s.fatal(err)
	}
	return &Org{creds.Organization.ID, creds.APIKey.APIKeyID, creds.APIKey.APIKey, creds.APIKey.SigningSecret}
}

// AddWallet adds a receiving wallet to org.
func (s *Server) AddWallet(org *Org, channel, operation, phone, name string) *engine.Wallet {
	s.helper()
	if s.Clock != nil {
		s.Clock.Add(time.Millisecond) // IDs, and so the rotation's tie-break, follow creation order
	}
	w, err := s.Engine.AddWallet(context.Background(), engine.AddWalletParams{
		OrganizationID: org.ID, Channel: channel, Operation: operation, Phone: phone, Name: name,
	})
	if err != nil {
		s.fatal(err)
	}
	return w
}

// Request is one HTTP call to the server.
type Request struct {
	Method, Path string            // POST and /api/v1/deposits when empty
	Body         string            // the exact bytes sent (and signed)
	APIKey       string            // "" sends no Authorization header
	Sign         bool              // add valid signature headers
	Secret       string            // signing secret; the org's when empty
	Timestamp    string            // overrides the signed timestamp header
	Signature    string            // overrides the signature header
	Header       map[string]string // more headers, set after the others
}

// Response is the server's answer, its body decoded when it is JSON.
type Response struct {
	Status int            // the HTTP status code
	Header http.Header    // the answer's headers
	Body   []byte         // the answer's body as sent
	JSON   map[string]any // Body decoded, when it is a JSON object
}

// ErrorCode is the error envelope's error.code, or "".
func (r *Response) ErrorCode() string { return Str(r.JSON, "error", "code") }

// ErrorMessage is the error envelope's error.message, or "".
func (r *Response) ErrorMessage() string { return Str(r.JSON, "error", "message") }

// Str digs a string out of nested JSON objects.
func Str(v any, path ...string) string {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

// Do sends req, signed with org's secret when req.Sign is set.
func (s *Server) Do(org *Org, req Request) *Response {
	s.helper()
	if req.Method == "" {
		req.Method = http.MethodPost
	}
	if req.Path == "" {
		req.Path = "/api/v1/deposits"
	}
	var body io.Reader
	if req.Body != "" {
		body = bytes.NewBufferString(req.Body)
	}
	r, err := http.NewRequest(req.Method, s.URL+req.Path, body)
	if err != nil {
		s.fatal(err)
	}
	if req.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+req.APIKey)
	}
	if req.Sign {
		secret := req.Secret
		if secret == "" {
			secret = org.Secret
		}
		ts := signing.Timestamp(s.Now())
		r.Header.Set(signing.TimestampHeader, ts)
		r.Header.Set(signing.SignatureHeader, signing.Sign([]byte(secret), ts, req.Method, req.Path, []byte(req.Body)))
	}
	if req.Timestamp != "" {
		r.Header.Set(signing.TimestampHeader, req.Timestamp)
	}
	if req.Signature != "" {
		r.Header.Set(signing.SignatureHeader, req.Signature)
	}
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	return s.send(r)
}

// send sends r and reads the answer.
func (s *Server) send(r *http.Request) *Response {
	s.helper()
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		s.fatal(err)
	}
	defer res.Body.Close()
	out := &Response{Status: res.StatusCode, Header: res.Header}
	out.Body, _ = io.ReadAll(res.Body)
	_ = json.Unmarshal(out.Body, &out.JSON)
	return out
}

// CreateH2H is a signed H2H create of org's with body.
func (s *Server) CreateH2H(org *Org, body string) *Response {
	s.helper()
	return s.Do(org, Request{APIKey: org.APIKey, Sign: true, Body: body})
}

// GetDeposit is a GET of a deposit, signed when sign is set.
func (s *Server) GetDeposit(org *Org, id string, sign bool) *Response {
	s.helper()
	return s.Do(org, Request{Method: http.MethodGet, Path: "/api/v1/deposits/" + id, APIKey: org.APIKey, Sign: sign})
}
