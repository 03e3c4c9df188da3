package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/payd-engine/payd/engine"
)

// maxJSONDepth bounds nesting so a hostile body cannot make decoding deep.
const maxJSONDepth = 32

// object is a JSON object of a request whose members are kept raw, so each
// field can be checked with an error that names it.
type object struct {
	path   string // "" for the body, "payer." for a nested object
	fields map[string]json.RawMessage
	order  []string // keys in the order they appeared
}

// parseObject checks that body is valid UTF-8 holding exactly one JSON
// object with no duplicate key at any depth, and returns its members.
func parseObject(body []byte) (*object, error) {
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
		key, err := objectKey(dec)
		if err != nil {
			return nil, err
		}
		if _, dup := o.fields[key]; dup {
			return nil, engine.Invalid(key, "duplicate key")
		}
		start := dec.InputOffset()
		if err := skipValue(dec, key, 1); err != nil {
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

func objectKey(dec *json.Decoder) (string, error) {
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

// skipValue consumes one value, rejecting duplicate keys in nested objects
// and nesting deeper than maxJSONDepth.
func skipValue(dec *json.Decoder, path string, depth int) error {
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
			key, err := objectKey(dec)
			if err != nil {
				return err
			}
			if seen[key] {
				return engine.Invalid(path+"."+key, "duplicate key")
			}
			seen[key] = true
			if err := skipValue(dec, path+"."+key, depth+1); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for dec.More() {
			if err := skipValue(dec, path+"[]", depth+1); err != nil {
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

// allow rejects the first member not named in names.
func (o *object) allow(names ...string) error {
	for _, k := range o.order {
		known := false
		for _, n := range names {
			known = known || k == n
		}
		if !known {
			return engine.Invalid(o.path+k, "unknown field")
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// string returns a string member. A missing or null required member is
// "is required"; any other JSON type is "must be a string".
func (o *object) string(name string, required bool) (string, error) {
	raw, ok := o.fields[name]
	if !ok || isNull(raw) {
		if required {
			return "", engine.Invalid(o.path+name, "is required")
		}
		return "", nil
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", engine.Invalid(o.path+name, "must be a string")
	}
	return s, nil
}

// object returns a nested object member, nil when absent or null.
func (o *object) object(name string, required bool) (*object, error) {
	raw, ok := o.fields[name]
	if !ok || isNull(raw) {
		if required {
			return nil, engine.Invalid(o.path+name, "is required")
		}
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, engine.Invalid(o.path+name, "must be an object")
	}
	inner, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	inner.path = o.path + name + "."
	return inner, nil
}

// rawObject returns the raw bytes of an object member, nil when absent or
// null, for values such as metadata that are kept as given.
func (o *object) rawObject(name string) (json.RawMessage, error) {
	raw, ok := o.fields[name]
	if !ok || isNull(raw) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, engine.Invalid(o.path+name, "must be an object")
	}
	return raw, nil
}

// errBodyTooLarge is returned for bodies over the limit: 413.
var errBodyTooLarge = &engine.Error{Code: engine.CodeRequestTooLarge, Message: "body: must be at most 65536 bytes"}

// readBody reads at most limit bytes of a request body.
func readBody(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, engine.Invalid("body", "could not be read")
	}
	if int64(len(body)) > limit {
		return nil, errBodyTooLarge
	}
	return body, nil
}

// pathID returns the {id} of a request path, or not_found for what cannot
// be an ID of ours (too long), without asking the store.
func pathID(r *http.Request, what string) (string, error) {
	id := r.PathValue("id")
	if len(id) > maxIDLength {
		return "", engine.Errorf(engine.CodeNotFound, "%s not found", what)
	}
	return id, nil
}

// readObject reads a request body that must be one JSON object with only
// the allowed members: the prologue of every unsigned JSON handler.
func readObject(r *http.Request, allowed ...string) (*object, error) {
	body, err := readBody(r.Body, MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	o, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	return o, o.allow(allowed...)
}
