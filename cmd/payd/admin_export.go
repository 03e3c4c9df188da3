package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/internal/csvsafe"
)

// payd admin export deposits|withdrawals|ledger|refunds: an organization's rows in
// a time range, oldest first, as CSV or JSON lines, for spreadsheets and
// accounting tools. A CSV cell a spreadsheet would run as a formula gets a
// leading quote (internal/csvsafe); JSON lines keep every value as it is.
// The rows stream: the engine reads them a page at a time
// (engine.ExportDeposits and its kin) and each is written as it comes, so
// memory stays one page whatever the range holds.

// exportSetup declares the flags of an export of kind and returns the
// command, whose result writes the rows when printed.
func exportSetup(kind string) func(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	return func(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
		org := fs.String("org", "", "organization ID (required)")
		from := fs.String("from", "", "only rows created at or after: RFC 3339, or a date YYYY-MM-DD (midnight in Dhaka)")
		to := fs.String("to", "", "only rows created before: RFC 3339, or a date YYYY-MM-DD (midnight in Dhaka, so --to is exclusive)")
		format := fs.String("format", "csv", "csv or jsonl")
		return func(ctx context.Context, eng *engine.Engine) (any, error) {
			if *org == "" {
				return nil, errors.New("--org is required")
			}
			if *format != "csv" && *format != "jsonl" {
				return nil, fmt.Errorf("--format %q: want csv or jsonl", *format)
			}
			p := engine.ListParams{OrganizationID: *org}
			var err error
			if p.CreatedGTE, err = exportTime("--from", *from); err != nil {
				return nil, err
			}
			if p.CreatedLT, err = exportTime("--to", *to); err != nil {
				return nil, err
			}
			if _, err := eng.GetOrganization(ctx, *org); err != nil {
				return nil, err
			}
			return &exportStream{ctx: ctx, eng: eng, kind: kind, format: *format, params: p}, nil
		}
	}
}

// exportTime parses --from or --to; "" is no bound.
func exportTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, engine.Dhaka); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want RFC 3339 (2026-11-21T00:00:00Z) or a date (2026-11-21)", flag, v)
}

// exportColumns are the fields of each kind, in order: the CSV header and
// the JSON keys.
var exportColumns = map[string][]string{
	"deposits": {"id", "created_at", "merchant_id", "checkout_mode", "payment_method", "amount", "currency", "status",
		"provider_transaction_id", "failure_code", "metadata"},
	"withdrawals": {"id", "created_at", "merchant_id", "payment_method", "phone", "amount", "commission", "currency",
		"status", "provider_reference", "failure_reason", "metadata"},
	"ledger": {"id", "created_at", "account", "kind", "amount", "balance_after", "currency", "resource_id"},
	"refunds": {"id", "created_at", "deposit_id", "merchant_id", "amount", "currency", "status", "reason",
		"provider_reference", "failure_code", "failure_reason", "metadata"},
}

// exportStream writes the rows when the admin command prints its result.
type exportStream struct {
	ctx    context.Context
	eng    *engine.Engine
	kind   string
	format string
	params engine.ListParams
}

// MarshalJSON refuses --json: an export is many rows, not one object.
func (s *exportStream) MarshalJSON() ([]byte, error) {
	return nil, errors.New("payd admin export prints rows: use --format jsonl, not --json")
}

func (s *exportStream) WriteText(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	columns := exportColumns[s.kind]
	var write func(values []string) error
	flush := func() error { return nil }
	if s.format == "csv" {
		cw := csvsafe.NewWriter(bw)
		write = cw.Write
		flush = func() error { cw.Flush(); return cw.Error() }
		if err := write(columns); err != nil {
			return err
		}
	} else {
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		obj := make(orderedRow, len(columns))
		write = func(values []string) error {
			for i, c := range columns {
				obj[i] = [2]string{c, values[i]}
			}
			return enc.Encode(obj)
		}
	}
	err := s.rows(write)
	if ferr := flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// rows calls write with each row's values, in exportColumns order.
func (s *exportStream) rows(write func([]string) error) error {
	switch s.kind {
	case "deposits":
		return s.eng.ExportDeposits(s.ctx, s.params, func(d *engine.Deposit) error {
			return write([]string{d.ID, engine.FormatTime(d.CreatedAt), d.MerchantID, d.CheckoutMode, d.PaymentMethod,
				engine.FormatAmount(d.Amount), engine.Currency, d.Status, d.ProviderTransactionID, d.FailureCode, string(d.Metadata)})
		})
	case "withdrawals":
		return s.eng.ExportWithdrawals(s.ctx, s.params, func(w *engine.Withdrawal) error {
			return write([]string{w.ID, engine.FormatTime(w.CreatedAt), w.MerchantID, w.PaymentMethod, w.Account,
				engine.FormatAmount(w.Amount), engine.FormatAmount(w.Commission), engine.Currency, w.Status,
				w.ProviderReference, w.FailureReason, string(w.Metadata)})
		})
	case "refunds":
		return s.eng.ExportRefunds(s.ctx, s.params, func(r *engine.Refund) error {
			return write([]string{r.ID, engine.FormatTime(r.CreatedAt), r.DepositID, r.MerchantID, engine.FormatAmount(r.Amount),
				engine.Currency, r.Status, r.Reason, r.ProviderReference, r.FailureCode, r.FailureReason, string(r.Metadata)})
		})
	default:
		return s.eng.ExportBalanceTransactions(s.ctx, s.params, func(b *engine.BalanceTransaction) error {
			return write([]string{b.ID, engine.FormatTime(b.CreatedAt), b.Account, b.Kind, engine.FormatAmount(b.Amount),
				engine.FormatAmount(b.BalanceAfter), engine.Currency, b.Reference})
		})
	}
}

// orderedRow is a JSON object of string members in a fixed order.
type orderedRow [][2]string

func (r orderedRow) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range r {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(kv[0])
		b = append(append(b, k...), ':')
		if kv[0] == "metadata" && json.Valid([]byte(kv[1])) {
			b = append(b, kv[1]...) // the merchant's JSON, as sent
			continue
		}
		v, _ := marshalString(kv[1])
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

// marshalString is a JSON string without HTML escaping.
func marshalString(s string) ([]byte, error) {
	var buf []byte
	w := bufferWriter{&buf}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf[:len(buf)-1], nil
}

type bufferWriter struct{ b *[]byte }

func (w bufferWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}
