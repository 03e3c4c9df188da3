package smsinbox

import (
	"time"

	"github.com/payd-engine/payd/engine"
)

// SMSView is a message as the admin CLI lists it (never a device: see
// transport.Devices). Parse results are null for a message that was not parsed.
type SMSView struct {
	ID            string     `json:"id"`
	DeviceID      string     `json:"device_id"`
	WalletID      *string    `json:"wallet_id"`
	Sender        string     `json:"sender"`
	ReceivedAt    string     `json:"received_at"`
	Status        string     `json:"status"`
	Reason        *string    `json:"reason"`
	DuplicateOf   *string    `json:"duplicate_of"`
	Channel       *string    `json:"channel"`
	Kind          *string    `json:"kind"`
	TransactionID *string    `json:"transaction_id"`
	Amount        *string    `json:"amount"`
	Counterparty  *string    `json:"counterparty"`
	OccurredAt    *string    `json:"occurred_at"`
	Balance       *string    `json:"balance"`
	Match         *MatchView `json:"matched_to,omitempty"`
	// PastedBy is the operator who pasted it; null for a device's.
	PastedBy *string `json:"pasted_by"`
	// ReviewedBy is the operator who approved or rejected it.
	ReviewedBy *string `json:"reviewed_by"`
	// GapID is the gap whose re-synchronization accepted it.
	GapID *string `json:"gap_id"`
	Body  string  `json:"body,omitempty"`
}

// MatchView is the verification attempt a message's transaction ID was
// submitted to.
type MatchView struct {
	DepositID     string  `json:"deposit_id"`
	AttemptID     string  `json:"attempt_id"`
	AttemptStatus string  `json:"attempt_status"`
	FailureCode   *string `json:"failure_code"`
}

// NewSMSView returns the wire shape of m; withBody adds the text.
func NewSMSView(m *SMS, withBody bool) SMSView {
	v := SMSView{
		ID: m.ID, DeviceID: m.DeviceID, WalletID: opt(m.WalletID), Sender: m.Sender,
		ReceivedAt: engine.FormatTime(m.ReceivedAt), Status: m.Status, Reason: opt(m.Reason),
		DuplicateOf: opt(m.DuplicateOf), Channel: opt(m.Channel),
		PastedBy: opt(m.PastedBy), ReviewedBy: opt(m.ReviewedBy), GapID: opt(m.GapID),
	}
	if p := m.Parsed; p != nil {
		v.Kind, v.TransactionID, v.Counterparty = opt(p.Kind), opt(p.TransactionID), opt(p.Counterparty)
		v.Amount, v.Balance = opt(engine.FormatAmount(p.Amount)), opt(engine.FormatAmount(p.Balance))
		v.OccurredAt = opt(engine.FormatTime(p.Time))
	}
	if m.Match != nil {
		v.Match = &MatchView{
			DepositID: m.Match.DepositID, AttemptID: m.Match.AttemptID,
			AttemptStatus: m.Match.Status, FailureCode: opt(m.Match.FailureCode),
		}
	}
	if withBody {
		v.Body = m.Body
	}
	return v
}

// DeviceView is a device with its wallets, for the admin CLI.
type DeviceView struct {
	ID         string       `json:"id"`
	Name       string       `json:"name"`
	TokenHint  string       `json:"token_hint"`
	CreatedAt  string       `json:"created_at"`
	LastSeenAt *string      `json:"last_seen_at"`
	RevokedAt  *string      `json:"revoked_at"`
	Wallets    []WalletView `json:"wallets"`
	// Silence is the device's own; "" means the server's.
	Silence string `json:"silence,omitempty"`
	// Signs: its posts must carry its app's signature.
	Signs bool `json:"signs"`
	// Token is shown once, when the device is added.
	Token string `json:"token,omitempty"`
	// SigningSecret is shown once, when it is made.
	SigningSecret string `json:"signing_secret,omitempty"`
}

// WalletView is a wallet's balance chain.
type WalletView struct {
	WalletID string `json:"wallet_id"`
	Channel  string `json:"channel"`
	// SIMSlot is the SIM slot whose messages prove it; 0 for any.
	SIMSlot int     `json:"sim_slot"`
	Balance *string `json:"balance"`
	// BalanceSetBy is the message that proved the balance, or "operator".
	BalanceSetBy *string `json:"balance_set_by"`
	// Gaps is how many gaps the chain was moved over.
	Gaps int `json:"gaps"`
}

// NewDeviceView returns the admin shape of a device and its chains.
func NewDeviceView(d *Device, chains []*Chain) DeviceView {
	v := DeviceView{
		ID: d.ID, Name: d.Name, TokenHint: "…" + d.TokenHint, CreatedAt: engine.FormatTime(d.CreatedAt),
		LastSeenAt: optTime(d.LastSeenAt), RevokedAt: optTime(d.RevokedAt), Wallets: []WalletView{},
		Signs: len(d.SigningSecret) > 0,
	}
	if d.Silence > 0 {
		v.Silence = d.Silence.String()
	}
	for _, c := range chains {
		v.Wallets = append(v.Wallets, NewWalletView(c))
	}
	return v
}

// NewWalletView returns the admin shape of a chain.
func NewWalletView(c *Chain) WalletView {
	v := WalletView{WalletID: c.WalletID, Channel: c.Channel, SIMSlot: c.SIMSlot, Gaps: c.Gaps}
	if c.Balance.Valid {
		v.Balance = opt(engine.FormatAmount(c.Balance.Decimal))
		v.BalanceSetBy = opt(c.BalanceMessageID)
		if c.BalanceMessageID == "" {
			v.BalanceSetBy = opt("operator")
		}
	}
	return v
}

// GapView is a gap a chain was moved over, for the admin CLI.
type GapView struct {
	ID          string `json:"id"`
	WalletID    string `json:"wallet_id"`
	FromBalance string `json:"from_balance"`
	// FromMessageID is null when the operator anchored FromBalance.
	FromMessageID  *string `json:"from_message_id"`
	ToBalance      string  `json:"to_balance"`
	Amount         string  `json:"amount"`
	FirstMessageID string  `json:"first_message_id"`
	LastMessageID  string  `json:"last_message_id"`
	Messages       int     `json:"messages"`
	// Actor is "smsinbox" for a re-synchronization, else the operator who
	// approved the message after the gap.
	Actor     string `json:"actor"`
	CreatedAt string `json:"created_at"`
}

// NewGapView returns the admin shape of a gap.
func NewGapView(g *Gap) GapView {
	return GapView{
		ID: g.ID, WalletID: g.WalletID, FromBalance: engine.FormatAmount(g.FromBalance), FromMessageID: opt(g.FromMessageID),
		ToBalance: engine.FormatAmount(g.ToBalance), Amount: engine.FormatAmount(g.Amount), FirstMessageID: g.FirstMessageID,
		LastMessageID: g.LastMessageID, Messages: g.Messages, Actor: g.Actor, CreatedAt: engine.FormatTime(g.CreatedAt),
	}
}

// PayoutView is a manual payout in the operator's queue. A refund's
// WithdrawalID is the refund's ID, and DepositID names the deposit it
// gives back.
type PayoutView struct {
	WithdrawalID          string  `json:"withdrawal_id"`
	DepositID             *string `json:"deposit_id,omitempty"`
	OrganizationID        string  `json:"organization_id"`
	PaymentMethod         string  `json:"payment_method"`
	Account               string  `json:"account"`
	Amount                string  `json:"amount"`
	Status                string  `json:"status"`
	ProviderTransactionID *string `json:"provider_transaction_id"`
	Reason                *string `json:"reason"`
	Operator              *string `json:"operator"`
	// SMS is the message that matched or completed the payout.
	SMS         *string `json:"sms_id"`
	QueuedAt    string  `json:"queued_at"`
	CompletedAt *string `json:"completed_at"`
}

// NewPayoutView returns the admin shape of a manual payout.
func NewPayoutView(p *ManualPayout) PayoutView {
	v := PayoutView{
		WithdrawalID: p.IdempotencyKey, OrganizationID: p.OrganizationID, PaymentMethod: p.Method,
		Account: p.Account, Amount: engine.FormatAmount(p.Amount), Status: p.Status,
		ProviderTransactionID: opt(p.Reference), Reason: opt(p.Reason), Operator: opt(p.Operator), SMS: opt(p.SMSID),
		QueuedAt: engine.FormatTime(p.CreatedAt), DepositID: opt(p.DepositID),
	}
	if !p.CompletedAt.IsZero() {
		v.CompletedAt = opt(engine.FormatTime(p.CompletedAt))
	}
	return v
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	return opt(engine.FormatTime(*t))
}
