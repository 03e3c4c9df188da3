package smsinbox

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// Store keeps the inbox durably. NewSQLStore implements it with the inbox's
// own SQL on the engine's transactions, so an inbox change can write the
// audit log (and read wallets and attempts) atomically with it.
type Store interface {
	// InboxTx runs fn in a read-write transaction, as engine.Store.InTx.
	InboxTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// InboxReadTx runs fn in a read-only transaction, as engine.Store.ReadTx.
	InboxReadTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
}

// Tx is the engine's transaction with the inbox's tables. Lock* methods lock
// the row until the transaction ends, like the engine's.
type Tx interface {
	engine.Tx

	// CreateDevice inserts d. Returns engine.ErrDuplicate if its token hash
	// exists.
	CreateDevice(ctx context.Context, d *Device) error
	// GetDeviceByTokenHash returns engine.ErrNotFound for an unknown hash.
	GetDeviceByTokenHash(ctx context.Context, hash []byte) (*Device, error)
	// LockDevice returns engine.ErrNotFound unless id is a device of
	// organizationID.
	LockDevice(ctx context.Context, organizationID, id string) (*Device, error)
	// UpdateDevice writes name, token hash and hint, last_seen_at and
	// revoked_at. Returns engine.ErrDuplicate if the token hash exists.
	UpdateDevice(ctx context.Context, d *Device) error
	// ListDevices returns an organization's devices, oldest first.
	ListDevices(ctx context.Context, organizationID string) ([]*Device, error)
	// UseSignature records that a device's post carried a signature (its
	// SHA-256), acceptable until expires, and forgets the device's expired
	// ones. Returns engine.ErrDuplicate if it was recorded already: a replay.
	UseSignature(ctx context.Context, deviceID string, signature []byte, expires, now time.Time) error

	// CreateChain inserts c. Returns engine.ErrDuplicate if its wallet has one.
	CreateChain(ctx context.Context, c *Chain) error
	// LockChain returns the chain of a wallet of organizationID, or
	// engine.ErrNotFound.
	LockChain(ctx context.Context, organizationID, walletID string) (*Chain, error)
	// UpdateChain writes device, SIM slot, balance, balance message, gaps and
	// updated_at.
	UpdateChain(ctx context.Context, c *Chain) error
	// ListChains returns the chains a device proves, by wallet ID; or, with
	// deviceID "", every chain of the organization.
	ListChains(ctx context.Context, organizationID, deviceID string) ([]*Chain, error)
	// SetWalletsLiveUntil sets engine.Wallet.LiveUntil of the wallets; nil
	// clears it.
	SetWalletsLiveUntil(ctx context.Context, walletIDs []string, until *time.Time) error

	// CreateSMS inserts m. Returns engine.ErrDuplicate if an original (a
	// message whose status is not duplicate) with m's fingerprint exists in
	// its organization.
	CreateSMS(ctx context.Context, m *SMS) error
	// UpdateSMS writes status, reason, reviewed_by, gap_id and updated_at.
	UpdateSMS(ctx context.Context, m *SMS) error
	// GetSMSByFingerprint returns the original with that fingerprint, or
	// engine.ErrNotFound.
	GetSMSByFingerprint(ctx context.Context, organizationID string, fingerprint []byte) (*SMS, error)
	// ListSMSByTransactionID returns the originals that carry a transaction
	// ID on a channel, oldest first.
	ListSMSByTransactionID(ctx context.Context, organizationID, channel, transactionID string) ([]*SMS, error)
	// ListHeldSMS returns a wallet's held messages, oldest received first.
	ListHeldSMS(ctx context.Context, walletID string) ([]*SMS, error)
	// ListHeldSMSFollowing returns a wallet's held messages one of whose
	// PrevBalances equals balance, and those stored without PrevBalances,
	// oldest received first: from an index, whatever else is held.
	ListHeldSMSFollowing(ctx context.Context, walletID string, balance decimal.Decimal) ([]*SMS, error)
	// ListOldestHeldSMS returns up to limit of a wallet's held messages
	// stored (CreatedAt) before before, oldest first.
	ListOldestHeldSMS(ctx context.Context, walletID string, before time.Time, limit int) ([]*SMS, error)
	// CountSMS returns how many messages of a wallet ("" for those of no
	// wallet) are in a status now, from a maintained count.
	CountSMS(ctx context.Context, organizationID, walletID, status string) (int, error)
	// ListSMSCounts returns the maintained counts of an organization's
	// messages, per wallet and status, omitting zeros, by wallet and status.
	ListSMSCounts(ctx context.Context, organizationID string) ([]SMSCount, error)

	// GetSettings returns an organization's inbox settings, or
	// engine.ErrNotFound if it has never set any.
	GetSettings(ctx context.Context, organizationID string) (*Settings, error)
	// PutSettings inserts or replaces an organization's settings.
	PutSettings(ctx context.Context, s *Settings) error
	// ListSMS returns the messages matching p, newest first, each with the
	// attempt its transaction ID was submitted to, if any.
	ListSMS(ctx context.Context, p ListSMSParams) ([]*SMS, error)

	// CreateManualPayout inserts p. Returns engine.ErrDuplicate if its key
	// exists.
	CreateManualPayout(ctx context.Context, p *ManualPayout) error
	// GetManualPayout returns engine.ErrNotFound for an unknown key.
	GetManualPayout(ctx context.Context, idempotencyKey string) (*ManualPayout, error)
	// LockManualPayout is GetManualPayout with the row locked.
	LockManualPayout(ctx context.Context, idempotencyKey string) (*ManualPayout, error)
	// UpdateManualPayout writes status, reference, reason, operator, SMS and
	// completed_at.
	UpdateManualPayout(ctx context.Context, p *ManualPayout) error
	// ListManualPayouts returns the payouts matching p, oldest first.
	ListManualPayouts(ctx context.Context, p ListPayoutsParams) ([]*ManualPayout, error)

	// Payouts waiting for an operator (metrics).

	// CountWaitingPayouts counts every organization's payouts waiting for
	// an operator, PayoutQueued and PayoutMatched, with the creation of the
	// oldest of each, from the status index: it reads the waiting payouts,
	// never the settled ones. A status none waits in is absent.
	CountWaitingPayouts(ctx context.Context) (map[string]engine.Queue, error)

	// The chain's self-healing and the operator's review.

	// GetSMS returns a message of organizationID, or engine.ErrNotFound.
	GetSMS(ctx context.Context, organizationID, id string) (*SMS, error)
	// ListHeldSMSSince returns up to limit of a wallet's held messages
	// stored (CreatedAt) after since, oldest first: from an index, whatever
	// was held before.
	ListHeldSMSSince(ctx context.Context, walletID string, since time.Time, limit int) ([]*SMS, error)
	// ListHeldSMSByBalance returns up to limit of a wallet's held messages
	// whose balance is balance, from an index.
	ListHeldSMSByBalance(ctx context.Context, walletID string, balance decimal.Decimal, limit int) ([]*SMS, error)
	// CreateGap inserts g.
	CreateGap(ctx context.Context, g *Gap) error
	// ListGaps returns up to limit (0: all) of an organization's gaps,
	// newest first; only walletID's unless it is "".
	ListGaps(ctx context.Context, organizationID, walletID string, limit int) ([]*Gap, error)
}

// Device is a receiving phone whose forwarder app posts its SMS.
type Device struct {
	ID             string
	OrganizationID string
	Name           string
	// TokenHash is the SHA-256 of the device's bearer token; the token
	// itself is shown once, at creation. TokenHint is its last characters.
	TokenHash  []byte
	TokenHint  string
	CreatedAt  time.Time
	LastSeenAt *time.Time
	RevokedAt  *time.Time
	// Silence is how long the device may go without reporting before its
	// wallets leave the pool; 0 means Config.Silence. A forwarder app that
	// sends no heartbeat is kept live by its messages alone.
	Silence time.Duration
	// SigningSecret is the secret its app signs posts with, sealed under
	// the master key; empty when it does not sign. A device that has one
	// must sign every post.
	SigningSecret []byte
}

// Chain is a wallet a device proves, with its balance chain: the last
// balance known to be genuine. A message counts only if it continues it.
type Chain struct {
	WalletID       string
	OrganizationID string
	DeviceID       string
	Channel        string
	// SIMSlot is the SIM slot (1, 2, ...) of the device whose messages
	// prove the wallet; 0 means any, the device's only wallet on Channel.
	SIMSlot int
	// Balance is invalid until the operator anchors the chain.
	Balance decimal.NullDecimal
	// BalanceMessageID is the message that set Balance; "" when the
	// operator did.
	BalanceMessageID string
	// Gaps is how many gaps the chain was moved over (Gap).
	Gaps      int
	UpdatedAt time.Time
}

// Gap is a break in a wallet's chain that it was moved over: by a run of
// held messages consistent among themselves (re-synchronized, Actor
// "smsinbox"), or by a message the operator approved that did not follow.
// Amount is what the messages the phone missed (or payd could not read)
// moved: ToBalance less FromBalance.
type Gap struct {
	ID             string
	OrganizationID string
	WalletID       string
	FromBalance    decimal.Decimal
	// FromMessageID is the message that had set FromBalance; "" when the
	// operator anchored it.
	FromMessageID string
	// ToBalance is the balance the first message after the gap continues.
	ToBalance      decimal.Decimal
	Amount         decimal.Decimal
	FirstMessageID string
	LastMessageID  string
	// Messages is how many messages the move accepted.
	Messages  int
	Actor     string
	CreatedAt time.Time
}

// Statuses of an SMS.
const (
	// StatusAccepted: parsed, and its balance continues the wallet's chain:
	// it proves its transaction.
	StatusAccepted = "accepted"
	// StatusHeld: parsed, but its balance does not continue the chain (yet):
	// an earlier message may still come, or it is forged.
	StatusHeld = "held"
	// StatusDuplicate: the same SMS forwarded again (DuplicateOf).
	StatusDuplicate = "duplicate"
	// StatusConflict: another text with the transaction ID of a proven
	// message, or one of two messages continuing the same balance.
	StatusConflict = "conflict"
	// StatusUnparsed: from a wallet's sender, in a format not known.
	StatusUnparsed = "unparsed"
	// StatusUntrustedSender: not from a whitelisted wallet sender ID.
	StatusUntrustedSender = "untrusted_sender"
	// StatusNoWallet: parsed, but the device proves no wallet on its channel.
	StatusNoWallet = "no_wallet"
	// StatusExpired: was held longer than the organization's HeldMaxAge, or
	// was the oldest of more than HeldMax held messages of its wallet: it no
	// longer continues a chain.
	StatusExpired = "expired"
	// StatusRejected: an operator rejected it (RejectSMS): it never proves
	// anything.
	StatusRejected = "rejected"
)

// SMSCount is how many messages of a wallet are in a status.
type SMSCount struct {
	// WalletID is "" for messages of no wallet.
	WalletID string
	Status   string
	Count    int
}

// Settings are an organization's inbox settings.
type Settings struct {
	OrganizationID string
	// PayoutSMSConfirm: a queued payout that a proven SMS matches waits, as
	// PayoutMatched, for an operator's confirmation instead of completing.
	PayoutSMSConfirm bool
	// HeldMax is how many held messages a wallet keeps; beyond it the
	// oldest expire.
	HeldMax int
	// HeldMaxAge is how long a message stays held before it expires.
	HeldMaxAge time.Duration
	// ResyncAfter is how many held messages, consistent among themselves,
	// re-synchronize a chain over a gap; 0 never (see resync).
	ResyncAfter int
	// ResyncQuiet is how long the chain must have accepted nothing since
	// the run's first message was stored before the run re-synchronizes it.
	ResyncQuiet time.Duration
	UpdatedAt   time.Time
}

// SMS is a message a device forwarded, with what payd made of it.
type SMS struct {
	ID             string
	OrganizationID string
	DeviceID       string
	// WalletID is the chain the message belongs to; "" if none.
	WalletID string
	Sender   string
	Body     string
	// Fingerprint identifies the text: a forwarded copy has the same.
	Fingerprint []byte
	// ReceivedAt is when the phone says it received the message.
	ReceivedAt  time.Time
	Status      string
	Reason      string
	DuplicateOf string
	// Channel is the sender's channel; "" for an untrusted sender.
	Channel string
	// Parsed is nil when the body was not parsed.
	Parsed *smsparse.Message
	// PrevBalances are the chain balances the message continues
	// (PreviousBalances of Parsed), at most two; nil when not parsed.
	PrevBalances []decimal.Decimal
	// PastedBy is the operator who pasted the message (PasteSMS); "" for a
	// device's.
	PastedBy string
	// ReviewedBy is the operator who approved or rejected it.
	ReviewedBy string
	// GapID is the gap whose re-synchronization accepted the message.
	GapID     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Match is the verification attempt of the message's transaction ID
	// in its organization; set by ListSMS only, nil if no deposit of the
	// organization was given the ID.
	Match *Match
}

// Match is the organization's attempt of a message's transaction ID.
type Match struct {
	DepositID   string
	AttemptID   string
	Status      string
	FailureCode string
}

// ListSMSParams filters ListSMS. Empty strings match all.
type ListSMSParams struct {
	OrganizationID string
	WalletID       string
	Status         string
	Limit          int
}

// Statuses of a manual payout.
const (
	PayoutQueued = "queued"
	// PayoutMatched: a proven SMS matched it, and the organization wants an
	// operator to confirm (Settings.PayoutSMSConfirm). Pending to the engine.
	PayoutMatched   = "matched"
	PayoutSucceeded = engine.PayoutSucceeded
	PayoutFailed    = engine.PayoutFailed
)

// ManualPayout is a withdrawal's payout, or a deposit's refund, waiting
// for, or done by, an operator. Its IdempotencyKey is the withdrawal's (or
// refund's) ID; Reference is the transaction ID of the operator's own send.
// A refund is the payout of DepositID's payer; both wait in one queue so
// that a debit SMS completes at most one of them.
type ManualPayout struct {
	engine.Payout
	OrganizationID string
	// DepositID is the deposit a refund gives back; "" for a payout.
	DepositID string
	// Operator is who recorded the outcome.
	Operator string
	// SMSID is the message that matched or completed it; "" if none.
	SMSID string
}

// ListPayoutsParams filters ListManualPayouts. Empty strings match all.
type ListPayoutsParams struct {
	OrganizationID string
	Status         string
}
