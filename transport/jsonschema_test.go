package transport_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A validator for the subset of JSON Schema (2020-12, as OpenAPI 3.1 uses
// it) that transport/openapi.JSON is written in: $ref to components,
// type (a name or a list, "null" for nullable), required, properties,
// additionalProperties (false or absent), enum, const, pattern, minLength,
// maxLength, minimum, maximum, items, minItems, maxItems, oneOf, and the
// date-time format. Any other keyword is an error rather than silently
// ignored, so the document cannot say more than the test checks.

// schemaAnnotations are keywords that describe and do not constrain.
var schemaAnnotations = map[string]bool{"description": true, "examples": true, "title": true,
	// payd's mark of its extension values of an enum (an OpenAPI
	// specification extension): documentation, not a constraint.
	"x-payd-extension-values": true}

type schemaValidator struct {
	doc      map[string]any // the whole OpenAPI document, for $ref
	mu       sync.Mutex
	patterns map[string]*regexp.Regexp
}

func newSchemaValidator(doc map[string]any) *schemaValidator {
	return &schemaValidator{doc: doc, patterns: map[string]*regexp.Regexp{}}
}

// resolve follows a "#/..." JSON pointer into the document.
func (v *schemaValidator) resolve(ref string) (any, error) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("unsupported $ref %q", ref)
	}
	var cur any = v.doc
	for _, p := range strings.Split(path, "/") {
		p = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
		m, ok := cur.(map[string]any)
		if !ok || m[p] == nil {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		cur = m[p]
	}
	return cur, nil
}

// validateJSON decodes body (numbers kept exact) and validates it.
func (v *schemaValidator) validateJSON(schema any, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return fmt.Errorf("body is not JSON: %v", err)
	}
	return v.validate(schema, value, "$")
}

// schemaKeywords are the keywords the validator checks.
var schemaKeywords = map[string]bool{
	"$ref": true, "type": true, "required": true, "properties": true, "additionalProperties": true,
	"enum": true, "const": true, "pattern": true, "minLength": true, "maxLength": true, "minimum": true,
	"maximum": true, "items": true, "minItems": true, "maxItems": true, "oneOf": true, "format": true,
}

func checkSchemaKeywords(schema map[string]any, at string) error {
	for key := range schema {
		if !schemaKeywords[key] && !schemaAnnotations[key] {
			return fmt.Errorf("%s: the validator does not know the keyword %q", at, key)
		}
	}
	if f, ok := schema["format"].(string); ok && f != "date-time" && f != "uri" {
		return fmt.Errorf("%s: the validator does not know the format %q", at, f)
	}
	return nil
}

// checkKeywords walks a part of the document and checks every schema in it
// (the values of "schema" and "schemas" members, and their subschemas).
func (v *schemaValidator) checkKeywords(node any, at string) error {
	switch n := node.(type) {
	case map[string]any:
		for k, x := range n {
			switch k {
			case "schema":
				if err := walkSchema(x, at+"."+k); err != nil {
					return err
				}
			case "schemas":
				for name, s := range x.(map[string]any) {
					if err := walkSchema(s, at+".schemas."+name); err != nil {
						return err
					}
				}
			default:
				if err := v.checkKeywords(x, at+"."+k); err != nil {
					return err
				}
			}
		}
	case []any:
		for i, x := range n {
			if err := v.checkKeywords(x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func walkSchema(node any, at string) error {
	schema, ok := node.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: schema is not an object", at)
	}
	if err := checkSchemaKeywords(schema, at); err != nil {
		return err
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		for k, p := range props {
			if err := walkSchema(p, at+".properties."+k); err != nil {
				return err
			}
		}
	}
	if items, ok := schema["items"]; ok {
		if err := walkSchema(items, at+".items"); err != nil {
			return err
		}
	}
	if one, ok := schema["oneOf"].([]any); ok {
		for i, s := range one {
			if err := walkSchema(s, fmt.Sprintf("%s.oneOf[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (v *schemaValidator) validate(schemaAny any, value any, at string) error {
	schema, ok := schemaAny.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: schema is not an object: %v", at, schemaAny)
	}
	if err := checkSchemaKeywords(schema, at); err != nil {
		return err
	}
	if ref, ok := schema["$ref"].(string); ok {
		target, err := v.resolve(ref)
		if err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		if err := v.validate(target, value, at); err != nil {
			return err
		}
	}
	if t, ok := schema["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return hasType(value, t) }) {
			return fmt.Errorf("%s: %s is not of type %v", at, show(value), types)
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		if !slices.ContainsFunc(enum, func(e any) bool { return sameJSON(e, value) }) {
			return fmt.Errorf("%s: %s is not one of %v", at, show(value), enum)
		}
	}
	if c, ok := schema["const"]; ok && !sameJSON(c, value) {
		return fmt.Errorf("%s: %s is not %v", at, show(value), c)
	}
	if s, ok := value.(string); ok {
		if p, ok := schema["pattern"].(string); ok {
			re, err := v.regexp(p)
			if err != nil {
				return fmt.Errorf("%s: pattern %q: %v", at, p, err)
			}
			if !re.MatchString(s) {
				return fmt.Errorf("%s: %q does not match %s", at, s, p)
			}
		}
		n := float64(len([]rune(s)))
		if m, ok := schema["minLength"].(float64); ok && n < m {
			return fmt.Errorf("%s: %q is shorter than %v", at, s, m)
		}
		if m, ok := schema["maxLength"].(float64); ok && n > m {
			return fmt.Errorf("%s: %q is longer than %v", at, s, m)
		}
		if schema["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				return fmt.Errorf("%s: %q is not a date-time", at, s)
			}
		}
	}
	if n, ok := value.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := schema["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %v is below %v", at, n, m)
		}
		if m, ok := schema["maximum"].(float64); ok && f > m {
			return fmt.Errorf("%s: %v is above %v", at, n, m)
		}
	}
	if arr, ok := value.([]any); ok {
		if m, ok := schema["minItems"].(float64); ok && float64(len(arr)) < m {
			return fmt.Errorf("%s: %d items, fewer than %v", at, len(arr), m)
		}
		if m, ok := schema["maxItems"].(float64); ok && float64(len(arr)) > m {
			return fmt.Errorf("%s: %d items, more than %v", at, len(arr), m)
		}
		if items, ok := schema["items"]; ok {
			for i, x := range arr {
				if err := v.validate(items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	if obj, ok := value.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					return fmt.Errorf("%s: required member %q is missing", at, r)
				}
			}
		}
		for k, x := range obj {
			if ps, ok := props[k]; ok {
				if err := v.validate(ps, x, at+"."+k); err != nil {
					return err
				}
			} else if schema["additionalProperties"] == false {
				return fmt.Errorf("%s: member %q is not allowed", at, k)
			}
		}
	}
	if one, ok := schema["oneOf"].([]any); ok {
		var matched []int
		var errs []string
		for i, s := range one {
			if err := v.validate(s, value, at); err == nil {
				matched = append(matched, i)
			} else {
				errs = append(errs, err.Error())
			}
		}
		if len(matched) != 1 {
			return fmt.Errorf("%s: %s matches %d of the oneOf schemas %v (failures: %s)", at, show(value), len(matched), matched, strings.Join(errs, "; "))
		}
	}
	return nil
}

func (v *schemaValidator) regexp(p string) (*regexp.Regexp, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if re, ok := v.patterns[p]; ok {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err == nil {
		v.patterns[p] = re
	}
	return re, err
}

func hasType(value any, t string) bool {
	switch t {
	case "null":
		return value == nil
	case "string":
		_, ok := value.(string)
		return ok
	case "boolean":
		_, ok := value.(bool)
		return ok
	case "object":
		_, ok := value.(map[string]any)
		return ok
	case "array":
		_, ok := value.([]any)
		return ok
	case "number":
		_, ok := value.(json.Number)
		return ok
	case "integer":
		n, ok := value.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !strings.ContainsAny(n.String(), ".eE")
	}
	return false
}

// sameJSON compares a schema value (decoded without UseNumber) with an
// instance value.
func sameJSON(schemaValue, value any) bool {
	if n, ok := value.(json.Number); ok {
		f, err := n.Float64()
		sv, ok := schemaValue.(float64)
		return err == nil && ok && f == sv
	}
	switch sv := schemaValue.(type) {
	case nil:
		return value == nil
	case string:
		s, ok := value.(string)
		return ok && s == sv
	case bool:
		b, ok := value.(bool)
		return ok && b == sv
	}
	return false // objects and arrays are not used in enum or const
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// TestSchemaValidator checks the validator on its own: each keyword
// accepts what it should and refuses what it should.
func TestSchemaValidator(t *testing.T) {
	doc := map[string]any{}
	if err := json.Unmarshal([]byte(`{"components":{"schemas":{
		"A":{"type":"object","required":["t"],"properties":{"t":{"type":"string","enum":["a"]},"n":{"type":["integer","null"],"minimum":0,"maximum":3}},"additionalProperties":false},
		"B":{"type":"object","required":["t"],"properties":{"t":{"type":"string","const":"b"},"s":{"type":"string","pattern":"^x+$","minLength":2,"maxLength":3}},"additionalProperties":false},
		"Any":{"type":"object"},
		"AB":{"oneOf":[{"$ref":"#/components/schemas/A"},{"$ref":"#/components/schemas/B"},{"type":"null"}]},
		"Both":{"oneOf":[{"$ref":"#/components/schemas/A"},{"$ref":"#/components/schemas/Any"}]},
		"L":{"type":"array","items":{"type":"string","format":"date-time"},"minItems":1,"maxItems":2},
		"Odd":{"type":"string","minimum":1,"multipleOf":2}
	}}}`), &doc); err != nil {
		t.Fatal(err)
	}
	v := newSchemaValidator(doc)
	for _, c := range []struct {
		schema, body string
		ok           bool
	}{
		{"A", `{"t":"a"}`, true},
		{"A", `{"t":"a","n":null}`, true},
		{"A", `{"t":"a","n":3}`, true},
		{"A", `{"t":"a","n":4}`, false},
		{"A", `{"t":"a","n":1.5}`, false},
		{"A", `{"t":"a","n":"1"}`, false},
		{"A", `{"t":"b"}`, false},
		{"A", `{}`, false},
		{"A", `{"t":"a","x":1}`, false},
		{"A", `[]`, false},
		{"B", `{"t":"b","s":"xx"}`, true},
		{"B", `{"t":"b","s":"xy"}`, false},
		{"B", `{"t":"b","s":"x"}`, false},
		{"B", `{"t":"b","s":"xxxx"}`, false},
		{"AB", `{"t":"a"}`, true},
		{"AB", `{"t":"b"}`, true},
		{"AB", `null`, true},
		{"AB", `{"t":"c"}`, false},
		{"Both", `{"t":"a"}`, false}, // matches both
		{"Both", `{"u":1}`, true},
		{"L", `["2026-11-21T10:00:00Z"]`, true},
		{"L", `[]`, false},
		{"L", `["a","b","c"]`, false},
		{"L", `["yesterday"]`, false},
		{"Odd", `"x"`, false}, // an unknown keyword is an error
	} {
		err := v.validateJSON(map[string]any{"$ref": "#/components/schemas/" + c.schema}, []byte(c.body))
		if (err == nil) != c.ok {
			t.Errorf("%s %s: err %v, want ok=%v", c.schema, c.body, err, c.ok)
		}
	}
}
