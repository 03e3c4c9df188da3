package sandboxtest

// Helpers copied from conformance/storetest, which the suite of the
// engine's tables keeps unexported.

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

// base is a UTC time at microsecond precision, as the engine produces.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

var dec = decimal.RequireFromString

func wantDuplicate(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("%s: %v, want ErrDuplicate", what, err)
	}
}

// wantNotFound requires the bare sentinel, so that errors.Is and == both
// match it.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if err != engine.ErrNotFound {
		t.Errorf("%s: %v, want ErrNotFound", what, err)
	}
}

// assertEqual compares values field by field: decimals by value, times with
// Equal, and a nil slice or map as equal to an empty one.
func assertEqual(t *testing.T, got, want any) {
	t.Helper()
	if diff := diff(reflect.ValueOf(got), reflect.ValueOf(want), ""); diff != "" {
		t.Errorf("mismatch:%s", diff)
	}
}

var (
	decimalType     = reflect.TypeFor[decimal.Decimal]()
	nullDecimalType = reflect.TypeFor[decimal.NullDecimal]()
	timeType        = reflect.TypeFor[time.Time]()
)

func diff(got, want reflect.Value, path string) string {
	if got.Type() != want.Type() {
		return fmt.Sprintf("\n%s: type %s != %s", path, got.Type(), want.Type())
	}
	switch {
	case got.Type() == decimalType:
		g, w := got.Interface().(decimal.Decimal), want.Interface().(decimal.Decimal)
		if !g.Equal(w) {
			return fmt.Sprintf("\n%s: got %s, want %s", path, g, w)
		}
		return ""
	case got.Type() == nullDecimalType:
		g, w := got.Interface().(decimal.NullDecimal), want.Interface().(decimal.NullDecimal)
		if g.Valid != w.Valid || g.Valid && !g.Decimal.Equal(w.Decimal) {
			return fmt.Sprintf("\n%s: got %v, want %v", path, g, w)
		}
		return ""
	case got.Type() == timeType:
		// A store may read a time back in another location.
		g, w := got.Interface().(time.Time), want.Interface().(time.Time)
		if !g.Equal(w) {
			return fmt.Sprintf("\n%s: got %v, want %v", path, g, w)
		}
		return ""
	case got.Kind() == reflect.Pointer:
		if got.IsNil() || want.IsNil() {
			if got.IsNil() != want.IsNil() {
				return fmt.Sprintf("\n%s: got %v, want %v", path, got, want)
			}
			return ""
		}
		return diff(got.Elem(), want.Elem(), path)
	case got.Kind() == reflect.Slice && got.Type().Elem().Kind() == reflect.Uint8:
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			return fmt.Sprintf("\n%s: got %q, want %q", path, got.Bytes(), want.Bytes())
		}
		return ""
	case got.Kind() == reflect.Slice:
		if got.Len() != want.Len() {
			return fmt.Sprintf("\n%s: %d elements, want %d", path, got.Len(), want.Len())
		}
		var out string
		for i := range got.Len() {
			out += diff(got.Index(i), want.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	case got.Kind() == reflect.Map:
		// Key by key, so decimals in values compare by value.
		if got.Len() != want.Len() {
			return fmt.Sprintf("\n%s: %d keys, want %d", path, got.Len(), want.Len())
		}
		var out string
		for _, k := range want.MapKeys() {
			g := got.MapIndex(k)
			if !g.IsValid() {
				out += fmt.Sprintf("\n%s[%v]: missing", path, k)
				continue
			}
			out += diff(g, want.MapIndex(k), fmt.Sprintf("%s[%v]", path, k))
		}
		return out
	case got.Kind() == reflect.Struct:
		var out string
		for i := range got.NumField() {
			out += diff(got.Field(i), want.Field(i), path+"."+got.Type().Field(i).Name)
		}
		return out
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		return fmt.Sprintf("\n%s: got %#v, want %#v", path, got.Interface(), want.Interface())
	}
	return ""
}

// Fixtures.
