package transport

import (
	"bytes"
	"encoding/json"
	"errors"
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
//
// It is a scanner of its own rather than encoding/json's Decoder.Token,
// which cost 159 allocations for a create's body (most of them errors its
// look-ahead builds and drops); FuzzParseObject holds it to the same
// answers as that Token-based parser on any input.
func parseObject(body []byte) (*object, error) {
	if !utf8.Valid(body) {
		return nil, engine.Invalid("body", "must be valid UTF-8")
	}
	sc := &jsonScanner{data: body}
	sc.space()
	if !sc.eat('{') {
		return nil, errNotObject
	}
	o := &object{fields: make(map[string]json.RawMessage, 8)}
	err := sc.members(func(key string) error {
		if _, dup := o.fields[key]; dup {
			return engine.Invalid(key, "duplicate key")
		}
		if !sc.colon() {
			return errNotObject
		}
		start := sc.pos
		if err := sc.value(jsonPath{key: key}, 1); err != nil {
			return err
		}
		o.fields[key] = body[start:sc.pos]
		o.order = append(o.order, key)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if sc.space(); sc.pos != len(body) {
		return nil, errNotObject
	}
	return o, nil
}

// errNotObject is every syntax error of a body.
var errNotObject = engine.Invalid("body", "must be a single JSON object")

// jsonPath names a value in error messages: its top-level member, then
// ".key" for each nested object member and "[]" for each array element. It
// is built into a string only for an error.
type jsonPath struct {
	parent *jsonPath
	key    string
	// element marks an array element; a member's key may be "" too.
	element bool
}

func (p *jsonPath) String() string {
	if p.parent == nil {
		return p.key
	}
	if p.element {
		return p.parent.String() + "[]"
	}
	return p.parent.String() + "." + p.key
}

// jsonScanner reads one JSON text from data, which is valid UTF-8. Where
// a body has more than one fault, it reports the one encoding/json's
// Decoder.Token would meet first: a duplicate key, or too deep a value,
// before the colon or comma that follows.
type jsonScanner struct {
	data []byte
	pos  int
}

func (sc *jsonScanner) space() {
	for sc.pos < len(sc.data) {
		switch sc.data[sc.pos] {
		case ' ', '\t', '\r', '\n':
			sc.pos++
		default:
			return
		}
	}
}

// eat consumes c if it is next.
func (sc *jsonScanner) eat(c byte) bool {
	if sc.pos < len(sc.data) && sc.data[sc.pos] == c {
		sc.pos++
		return true
	}
	return false
}

// colon consumes the colon after a key, and the space around it.
func (sc *jsonScanner) colon() bool {
	sc.space()
	ok := sc.eat(':')
	sc.space()
	return ok
}

// more reports whether a container whose elements are being read goes on:
// the next character, past space, is not its end (nor the other kind's).
func (sc *jsonScanner) more() bool {
	sc.space()
	return sc.pos < len(sc.data) && sc.data[sc.pos] != '}' && sc.data[sc.pos] != ']'
}

// members reads the members of an object whose '{' was consumed, through
// its '}', calling member with each key right after it: member must
// consume the colon and the value.
func (sc *jsonScanner) members(member func(key string) error) error {
	for first := true; sc.more(); first = false {
		if !first && !sc.eat(',') {
			return errNotObject
		}
		sc.space()
		key, ok := sc.key()
		if !ok {
			return errNotObject
		}
		if err := member(key); err != nil {
			return err
		}
	}
	if !sc.eat('}') {
		return errNotObject
	}
	return nil
}

// value consumes one value at path, nested depth deep, refusing duplicate
// keys in objects and nesting deeper than maxJSONDepth.
func (sc *jsonScanner) value(path jsonPath, depth int) error {
	if depth > maxJSONDepth {
		return engine.Invalid(path.String(), "nested too deeply")
	}
	if sc.pos >= len(sc.data) {
		return errNotObject
	}
	switch c := sc.data[sc.pos]; {
	case c == '{':
		sc.pos++
		var seen keySet
		return sc.members(func(key string) error {
			if !seen.add(key) {
				return engine.Invalid(path.String()+"."+key, "duplicate key")
			}
			member := jsonPath{parent: &path, key: key}
			if depth+1 > maxJSONDepth {
				return engine.Invalid(member.String(), "nested too deeply")
			}
			if !sc.colon() {
				return errNotObject
			}
			return sc.value(member, depth+1)
		})
	case c == '[':
		sc.pos++
		for first := true; sc.more(); first = false {
			element := jsonPath{parent: &path, element: true}
			if depth+1 > maxJSONDepth {
				return engine.Invalid(element.String(), "nested too deeply")
			}
			if !first && !sc.eat(',') {
				return errNotObject
			}
			sc.space()
			if err := sc.value(element, depth+1); err != nil {
				return err
			}
		}
		if !sc.eat(']') {
			return errNotObject
		}
		return nil
	case c == '"':
		if _, ok := sc.str(); !ok {
			return errNotObject
		}
		return nil
	case c == '-' || '0' <= c && c <= '9':
		if !sc.number() {
			return errNotObject
		}
		return nil
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(sc.data[sc.pos:], []byte(lit)) {
			sc.pos += len(lit)
			return nil
		}
	}
	return errNotObject
}

// keySet is the keys of one object seen so far. Most objects have a
// handful, which a scan finds faster than a map; past smallKeySet the keys
// go into a map, so thousands of keys cost linear time, not quadratic.
type keySet struct {
	few  []string
	many map[string]struct{}
}

const smallKeySet = 16

// add records key and reports whether it is new.
func (ks *keySet) add(key string) bool {
	if ks.many != nil {
		if _, dup := ks.many[key]; dup {
			return false
		}
		ks.many[key] = struct{}{}
		return true
	}
	for _, k := range ks.few {
		if k == key {
			return false
		}
	}
	if len(ks.few) < smallKeySet {
		ks.few = append(ks.few, key)
		return true
	}
	ks.many = make(map[string]struct{}, 4*smallKeySet)
	for _, k := range ks.few {
		ks.many[k] = struct{}{}
	}
	ks.many[key] = struct{}{}
	ks.few = nil
	return true
}

// key reads an object key: a string, decoded.
func (sc *jsonScanner) key() (string, bool) {
	raw, ok := sc.str()
	if !ok {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var k string
	if json.Unmarshal(raw, &k) != nil {
		return "", false
	}
	return k, true
}

// str consumes a string and returns it with its quotes, undecoded.
func (sc *jsonScanner) str() ([]byte, bool) {
	start := sc.pos
	if !sc.eat('"') {
		return nil, false
	}
	for sc.pos < len(sc.data) {
		c := sc.data[sc.pos]
		sc.pos++
		switch {
		case c == '"':
			return sc.data[start:sc.pos], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if sc.pos >= len(sc.data) {
				return nil, false
			}
			e := sc.data[sc.pos]
			sc.pos++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if sc.pos+4 > len(sc.data) {
					return nil, false
				}
				for _, h := range sc.data[sc.pos : sc.pos+4] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return nil, false
					}
				}
				sc.pos += 4
			default:
				return nil, false
			}
		}
	}
	return nil, false
}

// number consumes a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (sc *jsonScanner) number() bool {
	sc.eat('-')
	digits := func() int {
		n := 0
		for sc.pos < len(sc.data) && '0' <= sc.data[sc.pos] && sc.data[sc.pos] <= '9' {
			sc.pos++
			n++
		}
		return n
	}
	if sc.eat('0') {
		// no more integer digits after a leading zero
	} else if digits() == 0 {
		return false
	}
	if sc.eat('.') && digits() == 0 {
		return false
	}
	if sc.eat('e') || sc.eat('E') {
		if !sc.eat('+') {
			sc.eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
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
	if raw[0] != '"' {
		return "", engine.Invalid(o.path+name, "must be a string")
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil // parseObject checked it: nothing to decode
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
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
var errBodyTooLarge = &engine.Error{Code: codeRequestTooLarge, Message: "body: must be at most 65536 bytes"}

// readBody reads at most limit bytes of a request body. The handler's
// http.MaxBytesReader (limitBodies) may be what says it is too large.
func readBody(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) || int64(len(body)) > limit {
		return nil, errBodyTooLarge
	}
	if err != nil {
		return nil, engine.Invalid("body", "could not be read")
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
