package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Metadata limits of the contract.
const (
	MaxMetadataKeys  = 50
	MaxMetadataBytes = 8 << 10
)

// emptyMetadata is what a resource carries when the request had none.
var emptyMetadata = []byte("{}")

// normalizeMetadata checks a metadata value (raw JSON, nil when absent) and
// returns its compact form. Compaction drops only insignificant white space:
// keys keep their order and values their exact text, so the echo is faithful.
func normalizeMetadata(raw []byte) ([]byte, error) {
	if raw == nil {
		return emptyMetadata, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, Invalid("metadata", "must be a JSON object")
	}
	if buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return nil, Invalid("metadata", "must be a JSON object")
	}
	if buf.Len() > MaxMetadataBytes {
		return nil, Invalid("metadata", "must be at most 8192 bytes when serialized")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &keys); err != nil {
		return nil, Invalid("metadata", "must be a JSON object")
	}
	if len(keys) > MaxMetadataKeys {
		return nil, Invalid("metadata", "must have at most 50 keys")
	}
	return buf.Bytes(), nil
}

// sameMetadata reports whether two metadata objects are equal as JSON values:
// key order does not matter, number text does ("1.0" is not "1").
func sameMetadata(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, errA := decodeJSONValue(a)
	vb, errB := decodeJSONValue(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}

func decodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
