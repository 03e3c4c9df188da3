package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/payd-engine/payd/engine"
)

// FuzzParseObject: a request body is accepted only if it is valid UTF-8
// holding one JSON object, and every member it hands out is valid JSON.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"b"}`, `{"a":1,}`, `{"a" 1}`, `{"\u0061":1,"a":2}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`,
		`{"a":-0.5e+3,"b":01}`, `{"a":truex}`, `{"a":"\x"}`, `{"a":[1,2,]}`, `{"a":"\ud800"}`, "{\"a\":\"\t\"}", `{"a":1} `, `{"a":1}{}`, ``, ` `, `[`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[1]`, `{"a":1}{}`, `{"a":"\xff"}`, `{"a":[[[[[[[[[[]]]]]]]]]]}`, "{\"a\":\"\x00\"}", `{"amount":"1e3"}`, ` {"x" : null } `} {
		f.Add([]byte(s))
	}
	// Objects past keySet's scan, with and without a late duplicate.
	var many strings.Builder
	for i := range 40 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	f.Add([]byte(`{"m":{` + many.String() + `"k0":1}}`))
	f.Add([]byte(`{"m":{` + many.String() + `"k40":1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := parseObject(body)
		ref, refErr := parseObjectTokens(body)
		if fmt.Sprint(err) != fmt.Sprint(refErr) {
			t.Fatalf("%q: error %v, encoding/json's tokens say %v", body, err, refErr)
		}
		if err != nil {
			return
		}
		if !slices.Equal(o.order, ref.order) {
			t.Fatalf("%q: members %q, encoding/json's tokens say %q", body, o.order, ref.order)
		}
		for k, raw := range ref.fields {
			if !bytes.Equal(o.fields[k], raw) {
				t.Fatalf("%q: member %q is %q, encoding/json's tokens say %q", body, k, o.fields[k], raw)
			}
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

// parseObjectTokens is parseObject as it was, on encoding/json's
// Decoder.Token: the reference FuzzParseObject holds the scanner to.
func parseObjectTokens(body []byte) (*object, error) {
	if !utf8.Valid(body) {
		return nil, engine.Invalid("body", "must be valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, engine.Invalid("body", "must be a single JSON object")
	}
	o := &object{fields: map[string]json.RawMessage{}}
	for dec.More() {
		key, err := tokenKey(dec)
		if err != nil {
			return nil, err
		}
		if _, dup := o.fields[key]; dup {
			return nil, engine.Invalid(key, "duplicate key")
		}
		start := dec.InputOffset()
		if err := tokenSkip(dec, key, 1); err != nil {
			return nil, err
		}
		o.fields[key] = bytes.TrimLeft(body[start:dec.InputOffset()], " \t\r\n:")
		o.order = append(o.order, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, engine.Invalid("body", "must be a single JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, engine.Invalid("body", "must be a single JSON object")
	}
	return o, nil
}

func tokenKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", engine.Invalid("body", "must be a single JSON object")
	}
	key, ok := tok.(string)
	if !ok {
		return "", engine.Invalid("body", "must be a single JSON object")
	}
	return key, nil
}

// tokenSkip consumes one value, rejecting duplicate keys in nested objects
// and nesting deeper than maxJSONDepth.
func tokenSkip(dec *json.Decoder, path string, depth int) error {
	if depth > maxJSONDepth {
		return engine.Invalid(path, "nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return engine.Invalid("body", "must be a single JSON object")
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			key, err := tokenKey(dec)
			if err != nil {
				return err
			}
			if seen[key] {
				return engine.Invalid(path+"."+key, "duplicate key")
			}
			seen[key] = true
			if err := tokenSkip(dec, path+"."+key, depth+1); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for dec.More() {
			if err := tokenSkip(dec, path+"[]", depth+1); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return engine.Invalid("body", "must be a single JSON object")
	}
	return nil
}
