package transport

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzParseObject: a request body is accepted only if it is valid UTF-8
// holding one JSON object, and every member it hands out is valid JSON.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"b"}`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[1]`, `{"a":1}{}`, `{"a":"\xff"}`, `{"a":[[[[[[[[[[]]]]]]]]]]}`, "{\"a\":\"\x00\"}", `{"amount":"1e3"}`, ` {"x" : null } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := parseObject(body)
		if err != nil {
			return
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted invalid body %q", body)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			t.Fatalf("accepted a body that is not an object: %q", body)
		}
		if len(top) != len(o.fields) || len(o.order) != len(o.fields) {
			t.Fatalf("%q: %d members seen, %d kept", body, len(top), len(o.fields))
		}
		for k, raw := range o.fields {
			if !json.Valid(raw) {
				t.Fatalf("member %q is not valid JSON: %q", k, raw)
			}
		}
	})
}
