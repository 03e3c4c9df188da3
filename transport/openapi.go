package transport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// openAPIDoc is the OpenAPI 3.1 document of the API, served at
// {prefix}/openapi.json. Its servers entry names "/api", the reference
// server's prefix; the served copy names the prefix of the request instead.
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPIMembers are the top-level members of the document in their order,
// so the served copy reads like the file.
var openAPIMembers = mustMembers(openAPIDoc)

type member struct {
	key   string
	value json.RawMessage
}

func mustMembers(doc []byte) []member {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		panic("transport: openapi.json is not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			panic(fmt.Sprintf("transport: openapi.json: %v", err))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			panic(fmt.Sprintf("transport: openapi.json: %v", err))
		}
		out = append(out, member{t.(string), v})
	}
	return out
}

// openAPI serves GET {prefix}/openapi.json without authentication. The
// prefix comes from the request target as the client sent it, so the
// document stays right when the handler is mounted under http.StripPrefix.
func (s *server) openAPI(w http.ResponseWriter, r *http.Request) error {
	base := s.prefix
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && strings.HasSuffix(u.Path, "/openapi.json") {
		base = strings.TrimSuffix(u.Path, "/openapi.json")
	}
	if base == "" {
		base = "/"
	}
	servers, _ := json.Marshal([]map[string]string{{"url": base, "description": "This server's API prefix."}})
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range openAPIMembers {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		if m.key == "servers" {
			b.Write(servers)
		} else {
			b.Write(m.value)
		}
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, err := out.WriteTo(w)
	return err
}
