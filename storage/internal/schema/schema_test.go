package schema

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

func TestMinorUnits(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "0.01": 1, "-0.01": -1, "12.34": 1234, "12.340000": 1234, "500": 50000, "-1000.5": -100050, "1e3": 100000,
	} {
		got, err := MinorUnits(decimal.RequireFromString(in))
		if err != nil || got != want {
			t.Errorf("MinorUnits(%s) = %d, %v, want %d", in, got, err, want)
		}
		if back := FromMinorUnits(got); !back.Equal(decimal.RequireFromString(in)) {
			t.Errorf("FromMinorUnits(%d) = %s, want %s", got, back, in)
		}
	}
	for _, in := range []string{"0.001", "12.345", "-0.005", "1e-3", "100000000000000000000"} {
		if got, err := MinorUnits(decimal.RequireFromString(in)); err == nil {
			t.Errorf("MinorUnits(%s) = %d, want an error", in, got)
		}
	}
}

func TestMethodFeesRoundTrip(t *testing.T) {
	fee := engine.FeeRule{Percent: decimal.RequireFromString("1.25"), Fixed: decimal.RequireFromString("0.10")}
	o := &engine.Organization{ID: "org_1", MethodFees: engine.MethodFees{Deposit: map[string]engine.FeeRule{"bkash": fee}}}
	b, err := MethodFeesJSON(o)
	if err != nil {
		t.Fatal(err)
	}
	var f engine.MethodFees
	if err := ParseMethodFees([]byte(b), &f); err != nil || len(f.Deposit) != 1 ||
		!f.Deposit["bkash"].Percent.Equal(fee.Percent) || !f.Deposit["bkash"].Fixed.Equal(fee.Fixed) {
		t.Errorf("ParseMethodFees(%s) = %v, %v", b, f, err)
	}
	if err := ParseMethodFees([]byte("not json"), &f); err == nil {
		t.Error("ParseMethodFees accepted bad JSON")
	}
}

func TestAuditDetails(t *testing.T) {
	for _, in := range []map[string]string{nil, {}} {
		b, err := AuditDetailsJSON(in)
		if err != nil || b != "{}" {
			t.Errorf("AuditDetailsJSON(%v) = %q, %v, want {}", in, b, err)
		}
	}
	b, _ := AuditDetailsJSON(map[string]string{"k": "v"})
	if m, err := ParseAuditDetails([]byte(b)); err != nil || m["k"] != "v" || len(m) != 1 {
		t.Errorf("ParseAuditDetails(%s) = %v, %v", b, m, err)
	}
	if m, err := ParseAuditDetails([]byte("{}")); err != nil || m != nil {
		t.Errorf("ParseAuditDetails({}) = %v, %v, want nil", m, err)
	}
}
