// Package schema is the Go that storage/sqlite and storage/postgres share
// about their schemas, which name the same tables and columns in each
// dialect: the column lists their statements read and write, and the
// encodings that are the same in both (poisha, JSON columns). The SQL
// itself, and what a dialect encodes its own way (times, decimals), stays
// in each adapter.
package schema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// Column lists, in the order each adapter's scan reads them.
const (
	ApiKeyColumns = `id, organization_id, hash, hint, signing_secret,
	previous_signing_secret, previous_secret_expires_at, created_at, expires_at`
	AttemptColumns = `id, deposit_id, organization_id, channel, transaction_id, status, failure_code,
	tries, next_run_at, lease_owner, leased_until, created_at, updated_at, payer_phone`
	AuditColumns           = `id, actor, action, organization_id, subject, details, created_at`
	DeliveryAttemptColumns = `delivery_id, attempted_at, status_code, error, duration_ns`
	DeliveryColumns        = `id, event_id, endpoint_id, organization_id, status, attempts, next_attempt_at,
	lease_owner, leased_until, last_status_code, last_error, delivered_at, created_at, updated_at`
	DepositColumns = `id, organization_id, merchant_id, checkout_mode, amount, payment_method,
		redirect_url, payer_phone, metadata, status, action, checkout_token, checkout_url,
		channel, operation, wallet_id, recipient_phone, recipient_name, qr_payload,
		verification_state, attempts_used, failure_code, provider_transaction_id,
	expires_at, created_at, updated_at, refunded_amount, refund_reserved`
	EventColumns   = `id, organization_id, type, resource_id, payload, created_at`
	JournalColumns = `id, organization_id, kind, reference, memo, actor, created_at`
	OrgColumns     = `id, name, deposits_enabled, h2h_enabled, withdrawals_enabled,
		instructions_window_ns, redirect_window_ns,
		deposit_fee_percent, deposit_fee_fixed, withdraw_commission_percent, withdraw_commission_fixed,
	method_fees, created_at, updated_at, logo_url, support_contact, disabled_methods`
	WalletColumns = `id, organization_id, channel, operation, phone, name, qr_payload,
	min_amount, max_amount, daily_limit, enabled, last_assigned_at, created_at, live_until`
	WebhookEndpointColumns = `id, organization_id, url, secret, previous_secret, previous_secret_expires_at,
	enabled, disabled_reason, failing_since, created_at, updated_at`
	RefundColumns = `id, organization_id, deposit_id, merchant_id, amount, amount_omitted, reason, metadata,
		status, failure_code, failure_reason, deposit_h2h, step, provider_reference,
	tries, next_run_at, lease_owner, leased_until, created_at, updated_at`
	WithdrawalColumns = `id, organization_id, merchant_id, amount, commission, payment_method, account,
		metadata, status, payout_step, provider_reference, failure_reason,
	tries, next_run_at, lease_owner, leased_until, created_at, updated_at`
)

// MinorUnits converts an amount to integer poisha (amount * 100). An amount
// with more than two decimal places is an error, not rounded: rounding is
// the engine's decision.
func MinorUnits(d decimal.Decimal) (int64, error) {
	m := d.Shift(2)
	if !m.IsInteger() {
		return 0, fmt.Errorf("amount %s has more than 2 decimal places", d)
	}
	b := m.BigInt()
	if !b.IsInt64() {
		return 0, fmt.Errorf("amount %s out of range", d)
	}
	return b.Int64(), nil
}

// FromMinorUnits converts poisha back to an amount, exponent -2.
func FromMinorUnits(m int64) decimal.Decimal { return decimal.New(m, -2) }

// MethodFeesJSON is the method_fees column of o: engine.MethodFees as JSON,
// whose decimals are JSON strings and so round-trip exactly.
func MethodFeesJSON(o *engine.Organization) (string, error) {
	b, err := json.Marshal(o.MethodFees)
	if err != nil {
		return "", fmt.Errorf("organization %s: method fees: %w", o.ID, err)
	}
	return string(b), nil
}

// ParseMethodFees reads the method_fees column into f. Empty maps may read
// back nil.
func ParseMethodFees(b []byte, f *engine.MethodFees) error {
	*f = engine.MethodFees{}
	if err := json.Unmarshal(b, f); err != nil {
		return fmt.Errorf("method fees column: %w", err)
	}
	return nil
}

// AuditDetailsJSON is the details column of an audit entry: a JSON
// object, {} for none.
func AuditDetailsJSON(details map[string]string) (string, error) {
	if details == nil {
		details = map[string]string{}
	}
	b, err := json.Marshal(details)
	return string(b), err
}

// ParseAuditDetails reads the details column; {} reads back as nil.
func ParseAuditDetails(b []byte) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("audit details: %w", err)
	}
	if len(m) == 0 {
		m = nil
	}
	return m, nil
}

// AccountTotal is what several journals add to one balance row, in poisha.
type AccountTotal struct {
	OrganizationID, Account string
	Minor                   int64
}

// JournalTotals sums the entries of js per (organization, account), in
// that order: the order in which both stores update balance rows, so that
// two transactions never lock them in opposite orders.
func JournalTotals(js []*engine.Journal) ([]AccountTotal, error) {
	type key struct{ org, account string }
	sums := map[key]decimal.Decimal{}
	for _, j := range js {
		for _, e := range j.Entries {
			k := key{j.OrganizationID, e.Account}
			sums[k] = sums[k].Add(e.Amount)
		}
	}
	out := make([]AccountTotal, 0, len(sums))
	for k, sum := range sums {
		m, err := MinorUnits(sum)
		if err != nil {
			return nil, fmt.Errorf("total of %s %s: %w", k.org, k.account, err)
		}
		out = append(out, AccountTotal{k.org, k.account, m})
	}
	slices.SortFunc(out, func(a, b AccountTotal) int {
		return cmp.Or(strings.Compare(a.OrganizationID, b.OrganizationID), strings.Compare(a.Account, b.Account))
	})
	return out, nil
}

// BalanceMovement is a row of balance_transactions: what a journal moved on
// one balance account of its organization, and that balance right after it.
type BalanceMovement struct {
	ID, OrganizationID, Account, JournalID, Kind, Reference string
	Minor, AfterMinor                                       int64
	CreatedAt                                               time.Time
}

// BalanceMovements returns the movements of js on the balance accounts, in
// the journals' order, given after: each balance row's value once all of js
// are added (keyed by AccountTotal with Minor 0). Walking back from it, a
// journal's balance after is the row's final value less what the journals
// after it in js add: the same values writing them one by one gives.
func BalanceMovements(js []*engine.Journal, after map[AccountTotal]int64) ([]BalanceMovement, error) {
	var out []BalanceMovement
	running := maps.Clone(after)
	for i := len(js) - 1; i >= 0; i-- {
		j := js[i]
		totals := j.Totals()
		for k := len(totals) - 1; k >= 0; k-- {
			e := totals[k]
			if !engine.IsBalanceAccount(e.Account) {
				continue
			}
			m, err := MinorUnits(e.Amount)
			if err != nil {
				return nil, fmt.Errorf("journal %s total of %s: %w", j.ID, e.Account, err)
			}
			key := AccountTotal{OrganizationID: j.OrganizationID, Account: e.Account}
			bal, ok := running[key]
			if !ok {
				return nil, fmt.Errorf("journal %s: no balance row of %s after the batch", j.ID, e.Account)
			}
			out = append(out, BalanceMovement{ID: engine.BalanceTransactionID(j.ID, e.Account), OrganizationID: j.OrganizationID,
				Account: e.Account, JournalID: j.ID, Kind: j.Kind, Reference: j.Reference, Minor: m, AfterMinor: bal, CreatedAt: j.CreatedAt})
			running[key] = bal - m
		}
	}
	slices.Reverse(out)
	return out, nil
}

// JoinMethods is the disabled_methods column of methods.
func JoinMethods(methods []string) string { return strings.Join(methods, ",") }

// SplitMethods reads the disabled_methods column; "" is none.
func SplitMethods(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
