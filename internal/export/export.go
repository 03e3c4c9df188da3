// Package export writes an organization's rows in a time range, oldest
// first, as CSV or JSON lines, for spreadsheets and accounting tools: the
// admin CLI's exports and the console's downloads are this one writer. A
// CSV cell a spreadsheet would run as a formula gets a leading quote
// (internal/csvsafe); JSON lines keep every value as it is. The rows
// stream: the engine reads them a page at a time (engine.ExportDeposits
// and its kin) and each is written as it comes, so memory stays one page
// whatever the range holds.
package export

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/internal/csvsafe"
)

// Formats.
const (
	CSV   = "csv"
	JSONL = "jsonl"
)

// Columns are the fields of each kind, in order: the CSV header and
// the JSON keys.
var Columns = map[string][]string{
	"deposits": {"id", "created_at", "merchant_id", "checkout_mode", "payment_method", "amount", "currency", "status",
		"provider_transaction_id", "failure_code", "metadata"},
	"withdrawals": {"id", "created_at", "merchant_id", "payment_method", "phone", "amount", "commission", "currency",
		"status", "provider_reference", "failure_reason", "metadata"},
	"ledger": {"id", "created_at", "account", "kind", "amount", "balance_after", "currency", "resource_id"},
	"refunds": {"id", "created_at", "deposit_id", "merchant_id", "amount", "currency", "status", "reason",
		"provider_reference", "failure_code", "failure_reason", "metadata"},
}

// Write writes the rows of kind (deposits, withdrawals, ledger, refunds)
// that p selects in format (CSV or JSONL) to w.
func Write(ctx context.Context, eng *engine.Engine, kind, format string, p engine.ListParams, w io.Writer) error {
	if _, ok := Columns[kind]; !ok {
		return fmt.Errorf("export: no kind %q", kind)
	}
	if format != CSV && format != JSONL {
		return fmt.Errorf("export: no format %q", format)
	}
	s := stream{ctx: ctx, eng: eng, kind: kind, params: p}
	bw := bufio.NewWriterSize(w, 64<<10)
	columns := Columns[kind]
	var write func(values []string) error
	flush := func() error { return nil }
	if format == CSV {
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

type stream struct {
	ctx    context.Context
	eng    *engine.Engine
	kind   string
	params engine.ListParams
}

// rows calls write with each row's values, in Columns order.
func (s *stream) rows(write func([]string) error) error {
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
