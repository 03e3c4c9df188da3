package engine

import (
	"bytes"
	"encoding/json"
)

// marshalNoEscape is json.Marshal without HTML escaping, so metadata strings
// in events stay byte for byte what the merchant sent.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
