package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/internal/export"
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
	return export.Write(s.ctx, s.eng, s.kind, s.format, s.params, w)
}
