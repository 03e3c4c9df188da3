// Package model is a deliberately small model of what payd promises: the
// interface description (docs/spec/interface-v1.1.0.md), the contract that
// completes it (docs/spec/contract.md) and docs/behaviour.md
// "Behaviour worth knowing". It keeps organizations, deposits, verification
// attempts, the payments a provider reports, withdrawals and each
// organization's balance in plain maps and integers, and decides every
// outcome from the documents alone. It imports nothing of the engine.
//
// The state-machine test in this package drives the real engine and this
// model with the same random actions and compares them after every step.
// Where the documents leave an order or a detail open, the choice the model
// makes is written next to it (look for "open:").
package model

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Contract constants.
const (
	// MaxAttempts is how many distinct transaction IDs a deposit accepts.
	MaxAttempts = 3
	// Grace is how long past a deposit's deadline a delayed attempt is
	// retried before it fails (docs/behaviour.md: "until 15 minutes past the deadline"):
	// an outage, a payment shown as pending. Not an unknown ID: see
	// Model.NotFoundGrace.
	Grace = 15 * time.Minute
	// DefaultInstructionsWindow and DefaultRedirectWindow are the contract's
	// default payment windows.
	DefaultInstructionsWindow = 15 * time.Minute
	DefaultRedirectWindow     = 30 * time.Minute
)

// Error codes of the contract the model predicts ("" is success).
const (
	CodeInvalid             = "invalid_request"
	CodeForbidden           = "forbidden"
	CodeNotFound            = "not_found"
	CodeMerchantIDConflict  = "merchant_id_conflict"
	CodeMethodUnavailable   = "method_unavailable"
	CodeDepositTerminal     = "deposit_terminal"
	CodeAttemptInProgress   = "attempt_in_progress"
	CodeAttemptLimitReached = "attempt_limit_reached"
	CodeTransactionIDUsed   = "transaction_id_used"
	CodeRedirectAction      = "redirect_action"
	CodeInsufficientBalance = "insufficient_balance"
	CodeMerchantIDExists    = "merchant_id_exists"
	// Refunds (the contract's extension).
	CodeDepositNotRefundable = "deposit_not_refundable"
	CodeRefundExceedsDeposit = "refund_exceeds_deposit"
)

// Deposit statuses, verification states and attempt statuses.
const (
	Pending    = "pending"
	Processing = "processing"
	Succeeded  = "succeeded"
	Failed     = "failed"
	Cancelled  = "cancelled"
	Expired    = "expired"
	Delayed    = "delayed"
	// Refunded: a succeeded deposit whose succeeded refunds reached its
	// amount (the refunds extension).
	Refunded = "refunded"

	AwaitingReference = "awaiting_reference"
)

// Actions of a deposit: how the payer pays.
const (
	ActionInstructions = "display_instructions"
	ActionRedirect     = "redirect"
)

// Failure codes (contract, "failure_code values").
const (
	FailTransactionNotFound = "transaction_not_found"
	FailChannelMismatch     = "channel_mismatch"
	FailRecipientMismatch   = "recipient_mismatch"
	FailPayerMismatch       = "payer_mismatch"
	FailAmountMismatch      = "amount_mismatch"
	FailNotCompleted        = "payment_not_completed"
	FailOutsideWindow       = "outside_payment_window"
	FailProviderUnavailable = "provider_unavailable"
	FailTransactionIDUsed   = "transaction_id_used"
)

// Payment statuses and types as a provider reports them.
const (
	PaymentCompleted = "completed"
	PaymentPending   = "pending"
	PaymentFailed    = "failed"

	TypeCashOut = "cash_out"
	TypePayment = "payment"
)

// h2hMethods is the contract's default provider mapping: action, channel,
// operation.
var h2hMethods = map[string][3]string{
	"bkash":          {ActionRedirect, "bkash", ""},
	"nagad":          {ActionRedirect, "nagad", ""},
	"bkash_agent":    {ActionInstructions, "bkash", "cash_out"},
	"nagad_agent":    {ActionInstructions, "nagad", "cash_out"},
	"bkash_merchant": {ActionInstructions, "bkash", "make_payment"},
	"nagad_merchant": {ActionInstructions, "nagad", "make_payment"},
}

// redirectChannels maps each redirect PaymentMethod to the channel its
// transaction IDs belong to. open: the documents name the wallet channels
// (bkash, nagad, ...) but not the channel of upi, bank or Bangla QR; the
// model gives each its own.
var redirectChannels = map[string]string{
	"bkash": "bkash", "nagad": "nagad", "upi": "upi", "upay": "upay", "bank": "bank",
	"bkash_agent": "bkash", "nagad_agent": "nagad", "upay_agent": "upay",
	"bkash_merchant": "bkash", "nagad_merchant": "nagad", "upay_merchant": "upay",
	"bangla_qr_merchant": "bangla_qr",
}

// payoutMethods are the withdrawal methods with their ranges in BDT.
var payoutMethods = map[string][2]int64{
	"bkash": {100, 25_000}, "nagad": {100, 25_000}, "upay": {100, 25_000}, "bank": {50_000, 300_000},
}

// FeeRule is percent of the amount plus a fixed part. Both are kept in
// ten-thousandths (Percent4 = 15000 is 1.5 %, Fixed4 = 20000 is 2 BDT), the
// finest an organization's settings take.
type FeeRule struct {
	Percent4 int64
	Fixed4   int64
}

// Of is the rule applied to amount (in poisha): percent × amount + fixed,
// rounded to the poisha half away from zero. In units of 1e-8 BDT the exact
// value is amount·Percent4 + Fixed4·1e4, and a poisha is 1e6 of them.
func (r FeeRule) Of(amount int64) int64 {
	exact := amount*r.Percent4 + r.Fixed4*10_000
	return (2*exact + 1_000_000) / 2_000_000
}

// Org is an organization with its settings, receiving wallets and ledger.
type Org struct {
	ID                 string
	H2H                bool
	Withdrawals        bool
	InstructionsWindow time.Duration
	RedirectWindow     time.Duration
	DepositFee         FeeRule
	Commission         FeeRule
	// Per-method overrides of DepositFee and Commission.
	DepositFeeByMethod map[string]FeeRule
	CommissionByMethod map[string]FeeRule
	// Wallets maps channel+"/"+operation to the wallet's phone.
	Wallets map[string]string

	// The ledger as the model computes it, in poisha.
	Available, Held, Fees int64

	depositByMerchant    map[string]string
	withdrawalByMerchant map[string]string
	refundByMerchant     map[string]string
}

// Deposit is the model of a deposit.
type Deposit struct {
	ID, OrgID, MerchantID string
	Mode                  string // "redirect" or "h2h"
	Method                string
	Amount                int64 // poisha
	RedirectURL           string
	Payer                 string // normalized, h2h only
	Metadata              any    // decoded JSON value, for equality
	MetadataText          string // compact text as first sent

	Action, Channel, Operation, Recipient string

	Status, Verification string
	Used                 int
	FailureCode          string
	ProviderTxID         string
	CreatedAt, ExpiresAt time.Time
	Attempts             []string // attempt IDs, oldest first
	// Reserved is the sum of its refunds that have not failed, Refunded of
	// those that succeeded (poisha).
	Reserved, Refunded int64
}

// Terminal reports whether the deposit can no longer change.
func (d *Deposit) Terminal() bool { return d.Status != Pending && d.Status != Processing }

// Actionable reports whether next_action (or a redirect deposit's
// redirect_url) is present at now: not terminal and before expires_at.
func (d *Deposit) Actionable(now time.Time) bool { return !d.Terminal() && now.Before(d.ExpiresAt) }

// AttemptsRemaining is verification.attempts_remaining. open: for a
// display_instructions deposit past its deadline but not yet swept the
// documents do not say; the model keeps counting 3 - used until the
// deposit is terminal.
func (d *Deposit) AttemptsRemaining() int {
	if d.Action != ActionInstructions || d.Terminal() {
		return 0
	}
	return MaxAttempts - d.Used
}

// Attempt is one transaction ID submitted for a deposit.
type Attempt struct {
	ID, DepositID, Channel, TxID string
	Status, FailureCode          string
	Tries                        int
	NextRun                      time.Time
	// Submitted is when the ID was submitted: a late-learning provider's
	// grace for an unknown ID runs from it.
	Submitted time.Time
}

// Running reports whether the attempt is still to be resolved.
func (a *Attempt) Running() bool { return a.Status == Processing || a.Status == Delayed }

// Payment is a payment as the provider reports it for a transaction ID.
type Payment struct {
	Channel, TxID, Type, Status string
	Amount                      int64
	Currency                    string
	Payer, Recipient            string
	CompletedAt                 time.Time
	Precision                   time.Duration // 0 means a second
}

// Withdrawal is the model of a withdrawal.
type Withdrawal struct {
	ID, OrgID, MerchantID, Method string
	Amount, Commission            int64
	Status                        string
	// Outcome is what the provider will answer for its payout ("" pending).
	Outcome   string
	NextRun   time.Time
	CreatedAt time.Time
}

// Model is the whole modelled world.
type Model struct {
	Orgs         map[string]*Org
	Deposits     map[string]*Deposit
	DepositOrder []string
	Attempts     map[string]*Attempt
	// Owners maps organization+"/"+channel+"/"+transaction ID to the
	// attempt that holds it in that organization: contract, "A
	// transaction ID, once submitted to a deposit, can never serve another
	// deposit of the same channel ... of that organization".
	Owners map[string]string
	// Succeeded maps channel+"/"+transaction ID to the attempt that
	// succeeded with it: "once an ID has succeeded a deposit anywhere in
	// the service, it is used for every organization". Another
	// organization's submission that has not succeeded holds nothing.
	//
	// Deliberately changed (contract amended 2026-11-27): Owners used to
	// be service-wide, so that one organization submitting an ID first
	// blocked the organization whose wallet received the payment.
	Succeeded map[string]string
	Payments  map[string]Payment // by normalized transaction ID
	// DownUntil is the end of the provider's outage: every lookup before
	// it fails as unavailable.
	DownUntil       time.Time
	Unavailable     map[string]bool // payout methods the provider refuses
	Withdrawals     map[string]*Withdrawal
	WithdrawalOrder []string
	Refunds         map[string]*Refund
	RefundOrder     []string
	// RefundsDown makes the provider refuse refunds (503).
	RefundsDown bool
	// PayoutPoll is how long after a pending answer a payout is asked
	// about again (the engine's configured PayoutPollInterval).
	PayoutPoll time.Duration
	// NotFoundGrace is the provider's grace for an ID it does not show.
	// Zero is a provider that answers for the money network (the sandbox,
	// a wallet's API): contract, "Deposit and verification states", an
	// unknown ID is a failed attempt (transaction_not_found) after which
	// the payer may submit another; delayed is for a provider temporarily
	// unavailable. Positive is one that may learn of a payment late (the
	// SMS inbox, docs/behaviour.md "Verification"): the attempt is delayed and looked
	// up again until Submitted + NotFoundGrace (the last lookup exactly
	// then), and fails if the payment is still not shown.
	//
	// Deliberately changed: this model used to expect an unknown ID to be
	// retried like an outage, until 15 minutes past the deadline, with the
	// deposit processing and a corrected ID refused attempt_in_progress.
	NotFoundGrace time.Duration
}

// New returns an empty model.
func New(payoutPoll time.Duration) *Model {
	return &Model{
		Orgs: map[string]*Org{}, Deposits: map[string]*Deposit{}, Attempts: map[string]*Attempt{},
		Owners: map[string]string{}, Succeeded: map[string]string{}, Payments: map[string]Payment{}, Unavailable: map[string]bool{},
		Withdrawals: map[string]*Withdrawal{}, Refunds: map[string]*Refund{}, PayoutPoll: payoutPoll,
	}
}

// AddOrg registers an organization created with the given settings.
func (m *Model) AddOrg(o *Org) {
	if o.InstructionsWindow == 0 {
		o.InstructionsWindow = DefaultInstructionsWindow
	}
	if o.RedirectWindow == 0 {
		o.RedirectWindow = DefaultRedirectWindow
	}
	if o.Wallets == nil {
		o.Wallets = map[string]string{}
	}
	o.depositByMerchant = map[string]string{}
	o.withdrawalByMerchant = map[string]string{}
	o.refundByMerchant = map[string]string{}
	m.Orgs[o.ID] = o
}

func (o *Org) depositFee(method string) FeeRule {
	if r, ok := o.DepositFeeByMethod[method]; ok {
		return r
	}
	return o.DepositFee
}

func (o *Org) commission(method string) FeeRule {
	if r, ok := o.CommissionByMethod[method]; ok {
		return r
	}
	return o.Commission
}

// ---- input rules ----

var amountSyntax = regexp.MustCompile(`^(?:0|[1-9][0-9]*)(?:\.[0-9]{1,2})?$`)

// ParseAmount parses a request amount into poisha.
func ParseAmount(s string) (int64, bool) {
	if !amountSyntax.MatchString(s) {
		return 0, false
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(whole) > 15 {
		return 0, false
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, false
	}
	frac = (frac + "00")[:2]
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, true
}

func inRange(poisha, lo, hi int64) bool { return poisha >= lo*100 && poisha <= hi*100 }

var localMobile = regexp.MustCompile(`^01[3-9][0-9]{8}$`)

// NormalizePhone returns the local 11-digit form of a Bangladesh mobile
// number given as 01XNNNNNNNN, 8801XNNNNNNNN or +8801XNNNNNNNN.
func NormalizePhone(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "+880"):
		s = s[3:]
	case strings.HasPrefix(s, "880"):
		s = s[2:]
	}
	return s, localMobile.MatchString(s)
}

var bankAccount = regexp.MustCompile(`^[0-9]{8,20}$`)

func validMerchantID(s string) bool { return s != "" && len(s) <= 255 && validText(s) }

// validText refuses invalid UTF-8 and control characters.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func validURL(s string) bool {
	return len(s) <= 2048 && !strings.ContainsAny(s, " \t\r\n") &&
		(strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) &&
		len(strings.SplitN(strings.SplitN(s, "://", 2)[1], "/", 2)[0]) > 0
}

// metadata decodes a metadata value. It returns the value for equality,
// its compact text, and whether it is a valid object of at most 50 keys and
// 8 KiB. open: absent metadata is taken as the empty object, so a replay
// with "metadata": {} of a request without metadata is identical.
func metadata(raw []byte) (any, string, bool) {
	if raw == nil {
		raw = []byte("{}")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' || buf.Len() > 8<<10 {
		return nil, "", false
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.UseNumber()
	var v map[string]any
	if dec.Decode(&v) != nil || len(v) > 50 {
		return nil, "", false
	}
	return v, buf.String(), true
}

// NormalizeTxID trims and upper-cases a transaction ID: 3 to 64 printable
// ASCII characters without spaces.
func NormalizeTxID(s string) (string, bool) {
	id := strings.ToUpper(strings.TrimSpace(s))
	if len(id) < 3 || len(id) > 64 {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return "", false
		}
	}
	return id, true
}

// ---- deposits ----

// DepositRequest is a create-deposit request.
type DepositRequest struct {
	OrgID, CheckoutMode, Amount, Method, RedirectURL, MerchantID, PayerPhone string
	Metadata                                                                 []byte
}

// Result is what the model expects of an operation: an error code ("" for
// success), the resource it answers with, and whether it was created.
type Result struct {
	Code    string
	ID      string
	Created bool
}

// CreateDeposit applies a create request. newID is the identifier the
// engine gave a deposit it created (used only if the model creates one).
func (m *Model) CreateDeposit(now time.Time, r DepositRequest, newID string) Result {
	d, ok := m.validateDeposit(r)
	if !ok {
		return Result{Code: CodeInvalid}
	}
	org := m.Orgs[r.OrgID]
	// open: the documents do not order a replay against the forbidden
	// and unavailable checks; the model answers a known merchant_id first.
	if id, ok := org.depositByMerchant[r.MerchantID]; ok {
		if !sameDepositRequest(m.Deposits[id], d) {
			return Result{Code: CodeMerchantIDConflict}
		}
		return Result{ID: id}
	}
	if d.Mode == "h2h" && !org.H2H {
		return Result{Code: CodeForbidden}
	}
	if d.Mode == "h2h" && h2hMethods[d.Method][0] == ActionInstructions {
		d.Action, d.Channel, d.Operation = ActionInstructions, h2hMethods[d.Method][1], h2hMethods[d.Method][2]
		phone, ok := org.Wallets[d.Channel+"/"+d.Operation]
		if !ok {
			return Result{Code: CodeMethodUnavailable}
		}
		d.Recipient = phone
		d.Verification = AwaitingReference
		d.ExpiresAt = now.Add(org.InstructionsWindow).Truncate(time.Second)
	} else {
		d.Action, d.Channel = ActionRedirect, redirectChannels[d.Method]
		d.Verification = Processing
		d.ExpiresAt = now.Add(org.RedirectWindow).Truncate(time.Second)
	}
	d.ID, d.Status, d.CreatedAt = newID, Pending, now
	m.Deposits[d.ID] = d
	m.DepositOrder = append(m.DepositOrder, d.ID)
	org.depositByMerchant[d.MerchantID] = d.ID
	return Result{ID: d.ID, Created: true}
}

func (m *Model) validateDeposit(r DepositRequest) (*Deposit, bool) {
	d := &Deposit{OrgID: r.OrgID, Mode: r.CheckoutMode, Method: r.Method, RedirectURL: r.RedirectURL, MerchantID: r.MerchantID}
	switch r.CheckoutMode {
	case "", "redirect":
		d.Mode = "redirect"
	case "h2h":
	default:
		return nil, false
	}
	var ok bool
	if d.Amount, ok = ParseAmount(r.Amount); !ok {
		return nil, false
	}
	if d.Mode == "h2h" {
		if _, ok := h2hMethods[r.Method]; !ok || !inRange(d.Amount, 100, 25_000) {
			return nil, false
		}
		if d.Payer, ok = NormalizePhone(r.PayerPhone); !ok {
			return nil, false
		}
	} else {
		if _, ok := redirectChannels[r.Method]; !ok {
			return nil, false
		}
		lo, hi := int64(100), int64(25_000)
		if r.Method == "bank" {
			lo, hi = 25_000, 300_000
		}
		if !inRange(d.Amount, lo, hi) {
			return nil, false
		}
	}
	if !validURL(r.RedirectURL) || !validMerchantID(r.MerchantID) {
		return nil, false
	}
	if d.Metadata, d.MetadataText, ok = metadata(r.Metadata); !ok {
		return nil, false
	}
	return d, true
}

// sameDepositRequest compares the contract's immutable fields.
func sameDepositRequest(a, b *Deposit) bool {
	return a.Mode == b.Mode && a.Amount == b.Amount && a.Method == b.Method &&
		a.RedirectURL == b.RedirectURL && a.Payer == b.Payer && reflect.DeepEqual(a.Metadata, b.Metadata)
}

// SubmitResult is what the model expects of a submitted transaction ID.
type SubmitResult struct {
	Code      string
	AttemptID string
	// Repeat is true when the ID was already submitted for this deposit.
	Repeat bool
}

// SubmitTransactionID applies POST /v1/deposits/{id}/verify by orgID.
func (m *Model) SubmitTransactionID(now time.Time, orgID, depositID, raw, newAttemptID string) SubmitResult {
	txID, ok := NormalizeTxID(raw)
	if !ok {
		return SubmitResult{Code: CodeInvalid}
	}
	d, ok := m.Deposits[depositID]
	if !ok || d.OrgID != orgID {
		return SubmitResult{Code: CodeNotFound}
	}
	// open: for a redirect deposit that is also terminal the model answers
	// redirect_action (it is never verified by ID, whatever its state).
	if d.Action == ActionRedirect {
		return SubmitResult{Code: CodeRedirectAction}
	}
	return m.queue(now, d, txID, newAttemptID)
}

// SubmitCheckoutPayment is the hosted checkout of a redirect action
// reporting a payment's transaction ID (no organization: the checkout
// token names the deposit). open: it follows the rules of a submitted ID,
// attempt limit included; a display_instructions deposit has no such
// checkout (not_found).
func (m *Model) SubmitCheckoutPayment(now time.Time, depositID, raw, newAttemptID string) SubmitResult {
	txID, ok := NormalizeTxID(raw)
	if !ok {
		return SubmitResult{Code: CodeInvalid}
	}
	d := m.Deposits[depositID]
	if d.Action != ActionRedirect {
		return SubmitResult{Code: CodeNotFound}
	}
	return m.queue(now, d, txID, newAttemptID)
}

// queue applies the submission rules to a deposit.
func (m *Model) queue(now time.Time, d *Deposit, txID, newAttemptID string) SubmitResult {
	key := d.OrgID + "/" + d.Channel + "/" + txID
	if aid, ok := m.Owners[key]; ok {
		if m.Attempts[aid].DepositID == d.ID {
			return SubmitResult{AttemptID: aid, Repeat: true}
		}
		// open: an ID owned by another deposit is transaction_id_used even
		// when this deposit is terminal (docs/behaviour.md: refused at submission).
		return SubmitResult{Code: CodeTransactionIDUsed}
	}
	// open: likewise for an ID that succeeded another organization's
	// deposit, checked after the organization's own.
	if _, ok := m.Succeeded[d.Channel+"/"+txID]; ok {
		return SubmitResult{Code: CodeTransactionIDUsed}
	}
	switch {
	case d.Status == Failed && d.Used >= MaxAttempts:
		// docs/behaviour.md: "A fourth ID after three failed ones is attempt_limit_reached".
		return SubmitResult{Code: CodeAttemptLimitReached}
	case d.Terminal():
		return SubmitResult{Code: CodeDepositTerminal}
	case !now.Before(d.ExpiresAt):
		// docs/behaviour.md: "a new ID ... after the deadline is deposit_terminal",
		// also while an attempt is still running.
		return SubmitResult{Code: CodeDepositTerminal}
	case d.Status == Processing:
		return SubmitResult{Code: CodeAttemptInProgress}
	case d.Used >= MaxAttempts:
		return SubmitResult{Code: CodeAttemptLimitReached}
	}
	a := &Attempt{ID: newAttemptID, DepositID: d.ID, Channel: d.Channel, TxID: txID, Status: Processing, NextRun: now, Submitted: now}
	m.Attempts[a.ID] = a
	m.Owners[key] = a.ID
	d.Attempts = append(d.Attempts, a.ID)
	d.Used++
	d.Status, d.Verification = Processing, Processing
	return SubmitResult{AttemptID: a.ID}
}

// CancelCheckout is the payer cancelling a redirect action's checkout (the
// hosted page docs/checkout.md describes; the interface has no such operation).
// open: a checkout whose payment is being verified is attempt_in_progress,
// one past its deadline deposit_terminal.
func (m *Model) CancelCheckout(now time.Time, depositID string) string {
	d := m.Deposits[depositID]
	switch {
	case d.Action != ActionRedirect:
		return CodeNotFound
	case d.Terminal():
		return CodeDepositTerminal
	case d.Status == Processing:
		return CodeAttemptInProgress
	case !now.Before(d.ExpiresAt):
		return CodeDepositTerminal
	}
	d.Status, d.Verification = Cancelled, Cancelled
	return ""
}

// Pay records (or replaces) what the provider reports for a transaction ID.
func (m *Model) Pay(p Payment) { m.Payments[p.TxID] = p }

// judge is the contract's matching, in docs/behaviour.md's order; the first
// mismatch is the failure code. It answers Succeeded, Failed or Delayed.
func (m *Model) judge(now time.Time, d *Deposit, txID string) (string, string) {
	if now.Before(m.DownUntil) {
		return Delayed, FailProviderUnavailable
	}
	p, ok := m.Payments[txID]
	if !ok && m.NotFoundGrace > 0 {
		return Delayed, FailTransactionNotFound // until the grace ends (ProcessAttempts)
	}
	if !ok {
		return Failed, FailTransactionNotFound // final: the payer may submit another ID
	}
	want := TypePayment
	if d.Operation == "cash_out" {
		want = TypeCashOut
	}
	precision := p.Precision
	if precision <= 0 {
		precision = time.Second
	}
	switch {
	case p.Channel != d.Channel, p.Type != "" && p.Type != want:
		return Failed, FailChannelMismatch
	case d.Recipient != "" && p.Recipient != d.Recipient:
		return Failed, FailRecipientMismatch
	case d.Payer != "" && p.Payer != d.Payer:
		return Failed, FailPayerMismatch
	case p.Status == PaymentPending:
		// open: the contract names delayed only for a provider that is
		// unavailable. A payment shown as pending is modelled as the
		// engine and docs/behaviour.md treat it: retried like an outage, failing
		// with this code 15 minutes past the deadline (Grace).
		return Delayed, FailNotCompleted
	case p.Status != PaymentCompleted:
		return Failed, FailNotCompleted
	case p.Currency != "" && p.Currency != "BDT", p.Amount != d.Amount:
		return Failed, FailAmountMismatch
	case p.CompletedAt.Before(d.CreatedAt.Truncate(precision)), p.CompletedAt.After(d.ExpiresAt):
		return Failed, FailOutsideWindow
	}
	return Succeeded, ""
}

// backoff is the retry schedule of docs/behaviour.md of a delayed attempt: 5 s, 10 s,
// 20 s, 40 s, then every minute.
func backoff(tries int) time.Duration {
	switch tries {
	case 1:
		return 5 * time.Second
	case 2:
		return 10 * time.Second
	case 3:
		return 20 * time.Second
	case 4:
		return 40 * time.Second
	}
	return time.Minute
}

// ProcessAttempts runs the verification worker at now: every running
// attempt that is due is looked up once and its verdict applied, in due
// order (next run, then ID). open: the documents give no order; it
// matters only when attempts of two organizations would both succeed with
// one ID, and then the first to resolve wins (the engine's claim order,
// with one worker).
func (m *Model) ProcessAttempts(now time.Time) {
	ids := make([]string, 0, len(m.Attempts))
	for id, a := range m.Attempts {
		if a.Running() && !a.NextRun.After(now) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		x, y := m.Attempts[ids[i]], m.Attempts[ids[j]]
		if !x.NextRun.Equal(y.NextRun) {
			return x.NextRun.Before(y.NextRun)
		}
		return ids[i] < ids[j]
	})
	for _, id := range ids {
		a := m.Attempts[id]
		d := m.Deposits[a.DepositID]
		verdict, code := m.judge(now, d, a.TxID)
		a.Tries++
		if verdict == Delayed {
			until, next := d.ExpiresAt.Add(Grace), now.Add(backoff(a.Tries))
			if code == FailTransactionNotFound {
				until = a.Submitted.Add(m.NotFoundGrace)
				if next.After(until) {
					next = until // a short grace ends on time
				}
			}
			if now.Before(until) {
				a.Status, a.NextRun = Delayed, next
				continue
			}
			verdict = Failed
		}
		if verdict == Succeeded {
			// A payment succeeds one deposit in the whole service: one of
			// another organization succeeded with the ID first.
			if _, taken := m.Succeeded[a.Channel+"/"+a.TxID]; taken {
				verdict, code = Failed, FailTransactionIDUsed
			} else {
				m.Succeeded[a.Channel+"/"+a.TxID] = a.ID
			}
		}
		a.Status = verdict
		if verdict == Succeeded {
			org := m.Orgs[d.OrgID]
			fee := min(org.depositFee(d.Method).Of(d.Amount), d.Amount)
			org.Available += d.Amount - fee
			org.Fees += fee
			d.Status, d.Verification, d.ProviderTxID, d.FailureCode = Succeeded, Succeeded, a.TxID, ""
			continue
		}
		a.FailureCode, d.FailureCode = code, code
		switch {
		case d.Used >= MaxAttempts || !now.Before(d.ExpiresAt):
			d.Status, d.Verification = Failed, Failed
		case d.Action == ActionInstructions:
			d.Status, d.Verification = Pending, AwaitingReference
		default:
			d.Status, d.Verification = Pending, Processing
		}
	}
}

// ExpireDeposits ends the pending deposits whose deadline has passed.
func (m *Model) ExpireDeposits(now time.Time) {
	for _, d := range m.Deposits {
		if d.Status != Pending || now.Before(d.ExpiresAt) {
			continue
		}
		if d.Used == 0 {
			d.Status, d.Verification = Expired, Expired
		} else {
			d.Status, d.Verification = Failed, Failed
		}
	}
}

// ---- withdrawals and the ledger ----

// WithdrawalRequest is a create-withdrawal request.
type WithdrawalRequest struct {
	OrgID, Amount, Phone, Method, MerchantID string
}

// CreateWithdrawal applies a create request; newID is the engine's ID.
func (m *Model) CreateWithdrawal(now time.Time, r WithdrawalRequest, newID string) Result {
	amount, ok := ParseAmount(r.Amount)
	if !ok {
		return Result{Code: CodeInvalid}
	}
	limits, ok := payoutMethods[r.Method]
	if !ok || !inRange(amount, limits[0], limits[1]) {
		return Result{Code: CodeInvalid}
	}
	if r.Method == "bank" {
		ok = bankAccount.MatchString(r.Phone)
	} else {
		_, ok = NormalizePhone(r.Phone)
	}
	if !ok || !validMerchantID(r.MerchantID) {
		return Result{Code: CodeInvalid}
	}
	org := m.Orgs[r.OrgID]
	// open: forbidden and method_unavailable are answered before a reused
	// merchant_id; docs/behaviour.md fixes only "checked before the balance".
	switch {
	case !org.Withdrawals:
		return Result{Code: CodeForbidden}
	case m.Unavailable[r.Method]:
		return Result{Code: CodeMethodUnavailable}
	case org.withdrawalByMerchant[r.MerchantID] != "":
		return Result{Code: CodeMerchantIDExists}
	}
	commission := org.commission(r.Method).Of(amount)
	if org.Available < amount+commission {
		// open: nothing is created, so the merchant_id stays free.
		return Result{Code: CodeInsufficientBalance}
	}
	w := &Withdrawal{ID: newID, OrgID: org.ID, MerchantID: r.MerchantID, Method: r.Method,
		Amount: amount, Commission: commission, Status: Processing, NextRun: now, CreatedAt: now}
	org.Available -= amount + commission
	org.Held += amount + commission
	org.withdrawalByMerchant[r.MerchantID] = w.ID
	m.Withdrawals[w.ID] = w
	m.WithdrawalOrder = append(m.WithdrawalOrder, w.ID)
	return Result{ID: w.ID, Created: true}
}

// DecidePayout fixes what the provider answers for a withdrawal's payout.
func (m *Model) DecidePayout(id, outcome string) { m.Withdrawals[id].Outcome = outcome }

// ProcessPayouts runs the payout worker at now: each processing
// withdrawal that is due learns its outcome, or is asked again later.
func (m *Model) ProcessPayouts(now time.Time) {
	for _, w := range m.Withdrawals {
		if w.Status != Processing || w.NextRun.After(now) {
			continue
		}
		org := m.Orgs[w.OrgID]
		switch w.Outcome {
		case Succeeded:
			w.Status = Succeeded
			org.Held -= w.Amount + w.Commission
			org.Fees += w.Commission
		case Failed:
			w.Status = Failed
			org.Held -= w.Amount + w.Commission
			org.Available += w.Amount + w.Commission
		default:
			w.NextRun = now.Add(m.PayoutPoll)
		}
	}
}

// Adjust applies a manual adjustment: a signed amount, a reason and an
// actor. A debit may not take the available balance below zero.
func (m *Model) Adjust(orgID, amount, reason, actor string) string {
	neg := strings.HasPrefix(amount, "-")
	v, ok := ParseAmount(strings.TrimPrefix(amount, "-"))
	if !ok || v == 0 {
		return CodeInvalid
	}
	reason, actor = strings.TrimSpace(reason), strings.TrimSpace(actor)
	if reason == "" || len(reason) > 500 || actor == "" || len(actor) > 100 || !validText(reason) || !validText(actor) {
		return CodeInvalid
	}
	if neg {
		v = -v
	}
	org := m.Orgs[orgID]
	if org.Available+v < 0 {
		return CodeInsufficientBalance
	}
	org.Available += v
	return ""
}

// ---- refunds (the contract's extension "Extension: refunds") ----

// Refund is the model of a refund.
type Refund struct {
	ID, OrgID, DepositID, MerchantID string
	Amount                           int64
	// AmountOmitted: the request had no amount (all that was left).
	AmountOmitted bool
	Status        string
	// Outcome is what the provider will answer ("" pending).
	Outcome   string
	NextRun   time.Time
	CreatedAt time.Time
}

// RefundRequest is a create-refund request.
type RefundRequest struct {
	OrgID, DepositID, Amount, MerchantID, Reason string
	// AmountGiven is false when the request has no amount.
	AmountGiven bool
}

// CreateRefund applies a create request in the contract's order: 400,
// 404, deposit_not_refundable, the merchant_id (a replay of the same
// deposit and requested amount answers the refund it made, anything else
// merchant_id_conflict), refund_exceeds_deposit, insufficient_balance,
// method_unavailable. newID is the engine's ID.
func (m *Model) CreateRefund(now time.Time, r RefundRequest, newID string) Result {
	var amount int64
	if r.AmountGiven {
		var ok bool
		if amount, ok = ParseAmount(r.Amount); !ok || amount <= 0 {
			return Result{Code: CodeInvalid}
		}
	}
	if !validMerchantID(r.MerchantID) || utf8.RuneCountInString(r.Reason) > 500 || (r.Reason != "" && !validText(r.Reason)) {
		return Result{Code: CodeInvalid}
	}
	d, ok := m.Deposits[r.DepositID]
	if !ok || d.OrgID != r.OrgID {
		return Result{Code: CodeNotFound}
	}
	if d.Status != Succeeded {
		return Result{Code: CodeDepositNotRefundable}
	}
	org := m.Orgs[r.OrgID]
	if id, ok := org.refundByMerchant[r.MerchantID]; ok {
		prev := m.Refunds[id]
		if prev.DepositID != r.DepositID || prev.AmountOmitted != !r.AmountGiven || (r.AmountGiven && prev.Amount != amount) {
			return Result{Code: CodeMerchantIDConflict}
		}
		return Result{ID: id}
	}
	left := d.Amount - d.Reserved
	if !r.AmountGiven {
		amount = left
	}
	if amount <= 0 || amount > left {
		return Result{Code: CodeRefundExceedsDeposit}
	}
	if org.Available < amount {
		return Result{Code: CodeInsufficientBalance}
	}
	if m.RefundsDown {
		return Result{Code: CodeMethodUnavailable}
	}
	rf := &Refund{ID: newID, OrgID: r.OrgID, DepositID: d.ID, MerchantID: r.MerchantID, Amount: amount,
		AmountOmitted: !r.AmountGiven, Status: Processing, NextRun: now, CreatedAt: now}
	org.Available -= amount
	org.Held += amount
	d.Reserved += amount
	org.refundByMerchant[r.MerchantID] = rf.ID
	m.Refunds[rf.ID] = rf
	m.RefundOrder = append(m.RefundOrder, rf.ID)
	return Result{ID: rf.ID, Created: true}
}

// DecideRefund fixes what the provider answers for a refund.
func (m *Model) DecideRefund(id, outcome string) { m.Refunds[id].Outcome = outcome }

// ProcessRefunds runs the refund worker at now, as ProcessPayouts: a
// succeeded refund moves its hold out and counts as refunded, and the
// deposit whose succeeded refunds reach its amount becomes refunded (its
// verification state too, for H2H); a failed one gives the hold back and
// frees its reservation. The deposit fee is never returned.
func (m *Model) ProcessRefunds(now time.Time) {
	for _, id := range m.RefundOrder {
		rf := m.Refunds[id]
		if rf.Status != Processing || rf.NextRun.After(now) {
			continue
		}
		org, d := m.Orgs[rf.OrgID], m.Deposits[rf.DepositID]
		switch rf.Outcome {
		case Succeeded:
			rf.Status = Succeeded
			org.Held -= rf.Amount
			d.Refunded += rf.Amount
			if d.Status == Succeeded && d.Refunded >= d.Amount {
				d.Status = Refunded
				if d.Mode == "h2h" {
					d.Verification = Refunded
				}
			}
		case Failed:
			rf.Status = Failed
			org.Held -= rf.Amount
			org.Available += rf.Amount
			d.Reserved -= rf.Amount
		default:
			rf.NextRun = now.Add(m.PayoutPoll)
		}
	}
}
