package console

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Inbox is what the console does with the SMS inbox provider: its
// messages and their review, the balance chains, late payments, devices
// and the manual payout queue. The wiring adapts provider/smsinbox to it,
// so the console imports no provider. Every method that names an
// organization acts only on that organization's rows and returns the
// engine's not_found for another's; a change is audited with the actor of
// ctx (engine.WithActor).
type Inbox interface {
	// ListSMS returns an organization's newest messages, of one status
	// if status is not "".
	ListSMS(ctx context.Context, orgID, status string, limit int) ([]SMS, error)
	// ApproveSMS accepts a held or conflicting message the operator
	// checked by hand; RejectSMS sets it aside. reason is audited.
	ApproveSMS(ctx context.Context, orgID, messageID, reason string) error
	RejectSMS(ctx context.Context, orgID, messageID, reason string) error
	// PasteSMS takes a message the phone missed, as the operator copied it.
	PasteSMS(ctx context.Context, p PasteSMS) error
	// Anchor sets the balance a wallet's chain continues from and returns
	// how many held messages that proved.
	Anchor(ctx context.Context, orgID, walletID string, balance decimal.Decimal) (int, error)
	// ListUnmatched returns proven payments that credited no deposit.
	ListUnmatched(ctx context.Context, orgID string) ([]Unmatched, error)
	// CreditLatePayment credits a proven late payment to its deposit.
	CreditLatePayment(ctx context.Context, orgID, depositID, transactionID string) error
	// ListPayouts returns an organization's manual payouts, only those
	// waiting for an operator if open.
	ListPayouts(ctx context.Context, orgID string, open bool) ([]Payout, error)
	// CompletePayout records the operator's send of a queued payout with
	// its transaction ID; ConfirmPayout confirms one an SMS matched;
	// FailPayout fails one with a reason.
	CompletePayout(ctx context.Context, orgID, withdrawalID, transactionID string) error
	ConfirmPayout(ctx context.Context, orgID, withdrawalID string) error
	FailPayout(ctx context.Context, orgID, withdrawalID, reason string) error
	// ListDevices returns an organization's devices.
	ListDevices(ctx context.Context, orgID string) ([]Device, error)
	// RevokeDevice stops a device's token; RotateDevice gives it a new one,
	// returned once.
	RevokeDevice(ctx context.Context, orgID, deviceID string) error
	RotateDevice(ctx context.Context, orgID, deviceID string) (string, error)
	// AddDevice pairs a phone that proves the wallets' payments; its token
	// (and signing secret) are returned once.
	AddDevice(ctx context.Context, p AddDevice) (*NewDevice, error)
}

// AddDevice is a phone an owner pairs.
type AddDevice struct {
	OrganizationID, Name string
	WalletIDs            []string
	SigningSecret        bool
}

// NewDevice is a paired phone with its credentials, shown once.
type NewDevice struct {
	ID, Token, SigningSecret string
}

// PasteSMS is a message an operator pastes.
type PasteSMS struct {
	OrganizationID, WalletID, Sender, Text string
	ReceivedAt                             time.Time
}

// SMS is a message as the console shows it. Optional values are "".
type SMS struct {
	ID, WalletID, Sender, Status, Reason, Body    string
	Kind, TransactionID, Amount, Counterparty     string
	Balance                                       string
	MatchDepositID, MatchStatus, MatchFailureCode string
	ReceivedAt                                    time.Time
}

// Reviewable reports whether an operator may approve or reject it.
func (m SMS) Reviewable() bool { return m.Status == "held" || m.Status == "conflict" }

// Unmatched is a proven payment that credited no deposit.
type Unmatched struct {
	SMSID, TransactionID, Amount, From string
	ReceivedAt                         time.Time
	// DepositID is the deposit the payment was for ("" if none is known);
	// Creditable says the credit action applies.
	DepositID, DepositStatus string
	Creditable               bool
	Next                     string
}

// Payout is a manual payout, or a refund queued as one: its WithdrawalID
// is then the refund's ID and DepositID the deposit it gives back.
type Payout struct {
	WithdrawalID, Method, Account, Amount, Status, Reference, Reason, Operator string
	DepositID                                                                  string
	CreatedAt                                                                  time.Time
}

// Open reports whether the payout waits for an operator.
func (p Payout) Open() bool { return p.Status == "queued" || p.Status == "matched" }

// Device is an SMS forwarding phone.
type Device struct {
	ID, Name   string
	LastSeenAt *time.Time
	Revoked    bool
	// Silent: it has not reported within the inbox's silence limit.
	Silent  bool
	Wallets []DeviceWallet
}

// DeviceWallet is a wallet a device proves, with its chain's balance.
type DeviceWallet struct {
	WalletID, Channel, Balance string
}
