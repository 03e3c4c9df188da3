package httpsuite

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// The field tables of the interface as data: every key an object may
// carry, its JSON type, whether it is required, and a rule for its value.
// An object with a key outside its table fails, as does a missing
// required key or a value of the wrong type.

type kind int

const (
	kString kind = iota
	kStringOrNull
	kInt
	kObject
	kObjectOrNull
	kArray
)

func (k kind) String() string {
	return [...]string{"string", "string or null", "integer", "object", "object or null", "array"}[k]
}

type field struct {
	name     string
	kind     kind
	optional bool
	// rule checks a non-null value; it returns "" or what is wrong.
	rule func(v any) string
	// sub is the schema of an object value.
	sub schema
}

type schema []field

var (
	amountPattern = regexp.MustCompile(`^(?:0|[1-9][0-9]*)\.[0-9]{2}$`)
	timePattern   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`)
)

// amount: the canonical two-decimal form of a response amount.
func amount(v any) string {
	if s, _ := v.(string); !amountPattern.MatchString(s) {
		return fmt.Sprintf("%q is not an amount with exactly 2 decimals", s)
	}
	return ""
}

// rfc3339 is a time in RFC 3339, UTC, second precision.
func rfc3339(v any) string {
	s, _ := v.(string)
	if _, err := time.Parse(time.RFC3339, s); err != nil || !timePattern.MatchString(s) {
		return fmt.Sprintf("%q is not an RFC 3339 UTC time with second precision", s)
	}
	return ""
}

func prefixed(p string) func(any) string {
	return func(v any) string {
		if s, _ := v.(string); !strings.HasPrefix(s, p) || len(s) == len(p) {
			return fmt.Sprintf("%q does not start with %s", s, p)
		}
		return ""
	}
}

func oneOf(values ...string) func(any) string {
	return func(v any) string {
		if s, _ := v.(string); !slices.Contains(values, s) {
			return fmt.Sprintf("%q is not one of %s", s, strings.Join(values, ", "))
		}
		return ""
	}
}

func between(lo, hi int64) func(any) string {
	return func(v any) string {
		n, err := v.(json.Number).Int64()
		if err != nil || n < lo || n > hi {
			return fmt.Sprintf("%v is not an integer in %d..%d", v, lo, hi)
		}
		return ""
	}
}

func nonEmpty(v any) string {
	if s, _ := v.(string); s == "" {
		return "is empty"
	}
	return ""
}

// absoluteURL is an absolute http(s) URL.
func absoluteURL(v any) string {
	s, _ := v.(string)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("%q is not an absolute http(s) URL", s)
	}
	return ""
}

var (
	depositStatuses   = []string{"pending", "processing", "succeeded", "failed", "cancelled", "expired", "rejected", "refunded"}
	redirectMethods   = []string{"bkash", "nagad", "upi", "upay", "bank", "bkash_agent", "nagad_agent", "upay_agent", "bkash_merchant", "nagad_merchant", "upay_merchant", "bangla_qr_merchant"}
	h2hMethods        = []string{"bkash", "nagad", "bkash_agent", "nagad_agent", "bkash_merchant", "nagad_merchant"}
	withdrawalMethods = []string{"bkash", "nagad", "upay", "bank"}
	eventTypes        = []string{"deposit.succeeded", "deposit.failed", "deposit.expired", "withdraw.created", "withdraw.succeeded", "withdraw.failed",
		"refund.created", "refund.succeeded", "refund.failed", "deposit.refunded"}
	failureCodes = []string{"transaction_not_found", "channel_mismatch", "recipient_mismatch", "payer_mismatch", "amount_mismatch", "payment_not_completed", "outside_payment_window", "transaction_id_used", "provider_unavailable"}
)

var redirectCreatedSchema = schema{
	{name: "id", kind: kString, rule: prefixed("dep_")},
	{name: "amount", kind: kString, rule: amount},
	{name: "payment_method", kind: kString, rule: oneOf(redirectMethods...)},
	{name: "status", kind: kString, rule: oneOf(depositStatuses...)},
	{name: "metadata", kind: kObject},
	{name: "merchant_id", kind: kString, rule: nonEmpty},
	{name: "redirect_url", kind: kStringOrNull, optional: true, rule: absoluteURL},
	// The refunds extension: the sum of its succeeded refunds.
	{name: "refunded_amount", kind: kString, rule: amount},
}

var redirectStatusSchema = append(slices.Clone(redirectCreatedSchema),
	field{name: "bank_transaction_id", kind: kStringOrNull, optional: true})

var verificationStateSchema = schema{
	{name: "state", kind: kString, rule: nonEmpty},
	{name: "attempts_used", kind: kInt, rule: between(0, 3)},
	{name: "attempts_remaining", kind: kInt, rule: between(0, 3)},
	{name: "failure_code", kind: kStringOrNull, optional: true, rule: oneOf(failureCodes...)},
}

var h2hDepositSchema = schema{
	{name: "id", kind: kString, rule: prefixed("dep_")},
	{name: "amount", kind: kString, rule: amount},
	{name: "payment_method", kind: kString, rule: oneOf(h2hMethods...)},
	{name: "status", kind: kString, rule: oneOf(depositStatuses...)},
	{name: "metadata", kind: kObject},
	{name: "merchant_id", kind: kString, rule: nonEmpty},
	{name: "checkout_mode", kind: kString, rule: oneOf("h2h")},
	{name: "expires_at", kind: kString, rule: rfc3339},
	{name: "next_action", kind: kObjectOrNull}, // checked by type in checkDeposit
	{name: "verification", kind: kObject, sub: verificationStateSchema},
	{name: "provider_transaction_id", kind: kStringOrNull},
	// The refunds extension: the sum of its succeeded refunds.
	{name: "refunded_amount", kind: kString, rule: amount},
}

var displayInstructionsSchema = schema{
	{name: "type", kind: kString, rule: oneOf("display_instructions")},
	{name: "channel", kind: kString, rule: oneOf("bkash", "nagad")},
	{name: "operation", kind: kString, rule: oneOf("make_payment", "cash_out")},
	{name: "recipient", kind: kObject, sub: schema{
		{name: "type", kind: kString, rule: oneOf("phone")},
		{name: "value", kind: kString, rule: nonEmpty},
		{name: "name", kind: kStringOrNull},
	}},
	{name: "qr_payload", kind: kStringOrNull, optional: true},
	{name: "amount", kind: kString, rule: amount},
	{name: "currency", kind: kString, rule: oneOf("BDT")},
	{name: "verification", kind: kObject, sub: schema{
		{name: "endpoint", kind: kString, rule: nonEmpty},
		{name: "required_fields", kind: kArray, rule: func(v any) string {
			if !reflect.DeepEqual(v, []any{"provider_transaction_id"}) {
				return fmt.Sprintf("%v is not exactly [provider_transaction_id]", v)
			}
			return ""
		}},
	}},
}

var redirectActionSchema = schema{
	{name: "type", kind: kString, rule: oneOf("redirect")},
	{name: "url", kind: kString, rule: absoluteURL},
}

var queuedSchema = schema{
	{name: "deposit_id", kind: kString, rule: prefixed("dep_")},
	{name: "attempt_id", kind: kString, rule: prefixed("att_")},
	{name: "provider_transaction_id", kind: kString, rule: nonEmpty},
	{name: "status", kind: kString, rule: oneOf("processing")},
	{name: "attempts_used", kind: kInt, rule: between(0, 3)},
	{name: "attempts_remaining", kind: kInt, rule: between(0, 3)},
}

var resolvedSchema = schema{
	{name: "deposit_id", kind: kString, rule: prefixed("dep_")},
	{name: "attempt_id", kind: kString, rule: prefixed("att_")},
	{name: "provider_transaction_id", kind: kString, rule: nonEmpty},
	{name: "status", kind: kString, rule: oneOf("resolved")},
	{name: "attempt_status", kind: kString, rule: oneOf("succeeded", "failed")},
	{name: "deposit_status", kind: kString, rule: oneOf(depositStatuses...)},
	{name: "failure_code", kind: kStringOrNull, optional: true, rule: oneOf(failureCodes...)},
}

var withdrawalSchema = schema{
	{name: "id", kind: kString, rule: prefixed("wd_")},
	{name: "phone", kind: kString, rule: nonEmpty},
	{name: "payment_method", kind: kString, rule: oneOf(withdrawalMethods...)},
	{name: "amount", kind: kString, rule: amount},
	{name: "status", kind: kString, rule: oneOf("processing", "succeeded", "failed")},
	{name: "metadata", kind: kObject},
	{name: "merchant_id", kind: kString, rule: nonEmpty},
}

var balanceSchema = schema{
	{name: "currency", kind: kString, rule: oneOf("BDT")},
	{name: "available", kind: kString, rule: amount},
	{name: "held", kind: kString, rule: amount},
}

var errorSchema = schema{
	{name: "error", kind: kObject, sub: schema{
		{name: "code", kind: kString, rule: nonEmpty},
		{name: "message", kind: kString},
	}},
}

var eventSchema = schema{
	{name: "id", kind: kString, rule: prefixed("evt_")},
	{name: "type", kind: kString, rule: oneOf(eventTypes...)},
	{name: "timestamp", kind: kString, rule: rfc3339},
	{name: "data", kind: kObject},
}

// checkShape reports every way v differs from s and returns v as an
// object (nil if it is not one).
func checkShape(t T, what string, v any, s schema) map[string]any {
	t.Helper()
	var problems []string
	m := shapeProblems(v, s, "", &problems)
	for _, p := range problems {
		t.Errorf("%s: %s", what, p)
	}
	return m
}

func shapeProblems(v any, s schema, path string, problems *[]string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		*problems = append(*problems, fmt.Sprintf("%sis %s, want an object", at(path), typeName(v)))
		return nil
	}
	known := map[string]bool{}
	for _, f := range s {
		known[f.name] = true
		val, present := m[f.name]
		p := path + f.name
		if !present {
			if !f.optional {
				*problems = append(*problems, fmt.Sprintf("required field %s is missing", p))
			}
			continue
		}
		if !kindMatches(f.kind, val) {
			*problems = append(*problems, fmt.Sprintf("%s is %s, want %s", p, typeName(val), f.kind))
			continue
		}
		if val == nil {
			continue
		}
		if f.rule != nil {
			if msg := f.rule(val); msg != "" {
				*problems = append(*problems, fmt.Sprintf("%s: %s", p, msg))
			}
		}
		if f.sub != nil {
			shapeProblems(val, f.sub, p+".", problems)
		}
	}
	var extra []string
	for k := range m {
		if !known[k] {
			extra = append(extra, path+k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		*problems = append(*problems, fmt.Sprintf("field %s is not in the interface's table", k))
	}
	return m
}

func at(path string) string {
	if path == "" {
		return "the body "
	}
	return strings.TrimSuffix(path, ".") + " "
}

func kindMatches(k kind, v any) bool {
	switch k {
	case kString:
		_, ok := v.(string)
		return ok
	case kStringOrNull:
		_, ok := v.(string)
		return ok || v == nil
	case kInt:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	case kObject:
		_, ok := v.(map[string]any)
		return ok
	case kObjectOrNull:
		_, ok := v.(map[string]any)
		return ok || v == nil
	case kArray:
		_, ok := v.([]any)
		return ok
	}
	return false
}

func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "an integer"
		}
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// checkDeposit checks an H2H deposit or a redirect deposit (status shape
// when status is set, create shape otherwise), next_action by its type.
func checkDeposit(t T, what string, v any, statusShape bool) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	if m == nil || m["checkout_mode"] == nil {
		s := redirectCreatedSchema
		if statusShape {
			s = redirectStatusSchema
		}
		return checkShape(t, what, v, s)
	}
	checkShape(t, what, v, h2hDepositSchema)
	if na, ok := m["next_action"].(map[string]any); ok {
		switch na["type"] {
		case "display_instructions":
			checkShape(t, what+": next_action", na, displayInstructionsSchema)
		case "redirect":
			checkShape(t, what+": next_action", na, redirectActionSchema)
		default:
			t.Errorf("%s: next_action.type %v is neither display_instructions nor redirect", what, na["type"])
		}
	}
	return m
}

// get digs a value out of nested objects: get(v, "next_action", "recipient", "value").
func get(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// gets is get for a string value ("" if it is not one).
func gets(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

// geti is get for an integer value (-1 if it is not one).
func geti(v any, path ...string) int64 {
	n, ok := get(v, path...).(json.Number)
	if !ok {
		return -1
	}
	i, err := n.Int64()
	if err != nil {
		return -1
	}
	return i
}

// sameJSON reports whether two decoded JSON values are equal (numbers
// compared by their text).
func sameJSON(a, b any) bool { return reflect.DeepEqual(a, b) }

// decodeJSON decodes b with json.Number, as responses are.
func decodeJSON(b []byte) any {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// diffKeys lists the top-level keys whose values differ between two objects.
func diffKeys(a, b any) []string {
	ma, _ := a.(map[string]any)
	mb, _ := b.(map[string]any)
	var out []string
	for k := range ma {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
