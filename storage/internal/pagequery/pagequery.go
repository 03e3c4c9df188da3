// Package pagequery builds the keyset page queries of the lists
// for both SQL adapters: the same tables, columns and indexes in each
// dialect, with the dialect's placeholders, time encoding and index hint.
package pagequery

import (
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// Dialect is what differs between the adapters.
type Dialect struct {
	// Param returns the placeholder of the nth argument (1-based).
	Param func(n int) string
	// Time encodes a time argument as the schema stores it.
	Time func(time.Time) any
	// Hint returns what follows the table name to pin an index ("INDEXED
	// BY name" in SQLite), or "" where the planner is left to choose.
	Hint func(index string) string
}

// BalanceTransactionColumns is the column list of balance_transactions,
// in the order the adapters scan it.
const BalanceTransactionColumns = `id, organization_id, account, journal_id, kind, reference,
	amount_minor, balance_after_minor, created_at`

// Deposits returns the query of ListDepositsPage.
func Deposits(d Dialect, p engine.PageParams) (string, []any) {
	return build(d, p, "deposits", schema.DepositColumns, sourceIndex(p, "deposits", "provider_transaction_id"),
		eq{"status", p.Status}, eq{"payment_method", p.PaymentMethod}, eq{"merchant_id", p.MerchantID},
		eq{"provider_transaction_id", p.ProviderTransactionID})
}

// Withdrawals returns the query of ListWithdrawalsPage.
func Withdrawals(d Dialect, p engine.PageParams) (string, []any) {
	return build(d, p, "withdrawals", schema.WithdrawalColumns, sourceIndex(p, "withdrawals", "provider_reference"),
		eq{"status", p.Status}, eq{"payment_method", p.PaymentMethod}, eq{"merchant_id", p.MerchantID},
		eq{"provider_reference", p.ProviderTransactionID})
}

// Refunds returns the query of ListRefundsPage: one deposit's through
// refunds_deposit_created, or all through refunds_organization_created.
func Refunds(d Dialect, p engine.PageParams) (string, []any) {
	idx := index{name: "refunds_organization_created"}
	if p.DepositID != "" {
		idx.name = "refunds_deposit_created"
	}
	return build(d, p, "refunds", schema.RefundColumns, idx, eq{"deposit_id", p.DepositID})
}

// Events returns the query of ListEventsPage.
func Events(d Dialect, p engine.PageParams) (string, []any) {
	idx := index{name: "events_organization_created"}
	switch {
	case p.ResourceID != "":
		idx.name = "events_resource_created"
	case p.Type != "":
		idx.name = "events_organization_type"
	}
	return build(d, p, "events", schema.EventColumns, idx, eq{"type", p.Type}, eq{"resource_id", p.ResourceID})
}

// BalanceTransactions returns the query of ListBalanceTransactions: an
// account's movements through balance_transactions_organization_account,
// all of them as the merge of a page of each balance account from it
// (there is no index of all, which every movement would write).
func BalanceTransactions(d Dialect, p engine.PageParams) (string, []any) {
	idx := index{name: "balance_transactions_organization_account"}
	if p.Account != "" {
		return build(d, p, "balance_transactions", BalanceTransactionColumns, idx, eq{"account", p.Account})
	}
	var parts []string
	var args []any
	for i, account := range engine.BalanceAccounts {
		q, a := buildAt(d, len(args), p, "balance_transactions", BalanceTransactionColumns, idx, eq{"account", account})
		parts = append(parts, "SELECT "+BalanceTransactionColumns+" FROM ("+q+") AS a"+strconv.Itoa(i))
		args = append(args, a...)
	}
	args = append(args, p.Limit)
	return strings.Join(parts, " UNION ALL ") + pageOrder(p) + " LIMIT " + d.Param(len(args)), args
}

type eq struct{ column, value string }

// index is the index a page is read from, and the literal condition a
// partial index needs the query to spell.
type index struct{ name, partial string }

// sourceIndex picks the index of a deposits or withdrawals page: the most
// selective filter set, whose index keeps (created_at, id) order after its
// equality columns, or is a point lookup. merchant_id is left to the
// planner: its UNIQUE constraint's index has no name of ours.
func sourceIndex(p engine.PageParams, table, providerColumn string) index {
	switch {
	case p.MerchantID != "":
		return index{}
	case p.ProviderTransactionID != "":
		short := "provider_tx"
		if table == "withdrawals" {
			short = "reference"
		}
		return index{table + "_organization_" + short, providerColumn + " <> ''"}
	case p.Status != "":
		return index{name: table + "_organization_status"}
	case p.PaymentMethod != "":
		return index{name: table + "_organization_method"}
	}
	return index{name: table + "_organization_created"}
}

func build(d Dialect, p engine.PageParams, table, columns string, idx index, filters ...eq) (string, []any) {
	return buildAt(d, 0, p, table, columns, idx, filters...)
}

// pageOrder is the ORDER BY of a page: newest first, or oldest first
// when it ends before a cursor.
func pageOrder(p engine.PageParams) string {
	if p.Before != nil {
		return " ORDER BY created_at, id"
	}
	return " ORDER BY created_at DESC, id DESC"
}

// buildAt is build for a query whose parameters come after skip others.
func buildAt(d Dialect, skip int, p engine.PageParams, table, columns string, idx index, filters ...eq) (string, []any) {
	var conds []string
	var args []any
	param := func() string { return d.Param(skip + len(args)) }
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", param()))
	}
	add("organization_id = ?", p.OrganizationID)
	for _, f := range filters {
		if f.value != "" {
			add(f.column+" = ?", f.value)
		}
	}
	if idx.partial != "" {
		conds = append(conds, idx.partial)
	}
	if !p.CreatedGTE.IsZero() {
		add("created_at >= ?", d.Time(p.CreatedGTE))
	}
	if !p.CreatedLT.IsZero() {
		add("created_at < ?", d.Time(p.CreatedLT))
	}
	order := pageOrder(p)
	cursor, op := p.After, "<"
	if p.Before != nil {
		cursor, op = p.Before, ">"
	}
	if cursor != nil {
		args = append(args, d.Time(cursor.CreatedAt), cursor.ID)
		conds = append(conds, "(created_at, id) "+op+" ("+d.Param(skip+len(args)-1)+", "+d.Param(skip+len(args))+")")
	}
	from := table
	if idx.name != "" && d.Hint != nil {
		if h := d.Hint(idx.name); h != "" {
			from += " " + h
		}
	}
	args = append(args, p.Limit)
	q := "SELECT " + columns + " FROM " + from + " WHERE " + strings.Join(conds, " AND ") + order +
		" LIMIT " + param()
	return q, args
}
