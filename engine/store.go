package engine

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Store is the engine's persistence. Every state change and the rows that go
// with it are written in one InTx call, so they commit or vanish together.
type Store interface {
	// InTx runs fn in a read-write transaction. It commits when fn returns
	// nil and rolls back when fn returns an error or panics (the panic is
	// re-raised). It is the one place that retries a busy database or a
	// serialization failure, so fn must be safe to run more than once.
	InTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// ReadTx runs fn in a read-only transaction over one consistent snapshot.
	ReadTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// Close releases the store's connections.
	Close() error
}

// OneReader is implemented by stores for which a read of one statement
// costs less without a transaction around it (Postgres: one round trip
// instead of three). The engine uses it where it reads one row or list.
type OneReader interface {
	// ReadOne runs fn, which makes exactly one statement, a read (a Get or
	// List method of Tx), which sees what is committed as it runs. The
	// store may refuse any further statement, and any write, with an error.
	ReadOne(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
}

// CreateReader is implemented by stores for which the two reads that
// precede a deposit create cost less together (Postgres: one round trip
// instead of two).
type CreateReader interface {
	// ReadCreate returns the organization and its deposit of merchantID,
	// nil without an error when there is none, each as committed when
	// read, as two ReadOne reads would: ErrNotFound without the
	// organization.
	ReadCreate(ctx context.Context, organizationID, merchantID string) (*Organization, *Deposit, error)
}

// ConcurrentWriter is implemented by a Store whose write transactions run
// in parallel (Postgres: one connection each, row locks) rather than one
// at a time (SQLite's one write lock). The engine's group commit then
// writes up to that many batches of a kind at once (see txBatcher); a
// Store that does not implement it gets one.
type ConcurrentWriter interface {
	// ConcurrentWrites is how many write transactions of one kind may
	// usefully run at once: a share of the connections, leaving the rest
	// to reads and to the other kinds.
	ConcurrentWrites() int
}

// JournalsCreator is implemented by a Tx that writes several journals in
// fewer statements than a CreateJournal each: the journals that the
// functions of a shared transaction queued (see sharedTx).
type JournalsCreator interface {
	// CreateJournals is CreateJournal of each of js, in order, in the
	// caller's transaction: journals, entries, and balance rows, each
	// (organization, account) updated once by the sum of its entries, in
	// (organization, account) order. Returns ErrDuplicate if a journal's
	// ID exists, and fails as CreateJournal does on an amount that is not
	// whole poisha.
	CreateJournals(ctx context.Context, js []*Journal) error
}

// Pipeliner is implemented by a Tx that can send inserts without waiting
// for each one's answer (Postgres: many statements in one round trip), for
// the writes a shared transaction leaves to its end (see sharedTx).
type Pipeliner interface {
	// Pipeline runs fn on a Tx whose Create methods may only queue their
	// insert, sent with the others before fn's next other statement or
	// when fn returns: an insert's error (ErrDuplicate, ...) is then
	// returned by that statement or by Pipeline, not by the Create method.
	// The caller's transaction must not be used after such an error.
	Pipeline(ctx context.Context, fn func(tx Tx) error) error
	// PipelineCommit is Pipeline for a transaction function's last
	// writes: what fn queues may go with the transaction's COMMIT, in one
	// round trip, and an error among them is then the commit's, which
	// fails the transaction (Store.InTx returns it, and nothing is kept).
	// A statement made after it sends the queued ones first, as Pipeline
	// does.
	PipelineCommit(ctx context.Context, fn func(tx Tx) error) error
}

// SQLTx is a Tx seen as SQL, for a plug-in that keeps tables of its own
// (a provider, which ships its SQL per dialect): the Tx of storage/sqlite
// and storage/postgres implement it, and the plug-in reaches it by a type
// assertion on the Tx that Store.InTx or ReadTx gives it, so its rows
// commit with the engine's. The engine itself never uses it.
//
// Arguments and scan destinations are Go values, which the store encodes
// as its schema does (SQLite: Unix microseconds, decimals as canonical
// text): string, bool, int, int64, []byte, time.Time (the zero time is
// NULL), *time.Time (nil is NULL), decimal.Decimal, decimal.NullDecimal,
// and, to scan into, pointers to them (a NULL time scans as the zero time
// into *time.Time) and database/sql's Null types. Errors are the engine's:
// a violated uniqueness constraint is ErrDuplicate (in Postgres it also
// aborts the transaction: write INSERT ... ON CONFLICT DO NOTHING and
// check the count).
type SQLTx interface {
	// Dialect names the SQL the store speaks: "sqlite" or "postgres".
	Dialect() string
	// ExecSQL runs a statement and returns how many rows it changed.
	ExecSQL(ctx context.Context, query string, args ...any) (int64, error)
	// QuerySQL runs a query and calls row once per row, in order; scan
	// reads the row's columns into dest.
	QuerySQL(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error
}

// Tx is what the engine can do inside a transaction: one interface per
// noun, embedded here, each documented where it is declared. A store
// implements all of them on one transaction type and passes the shared
// store suite (conformance/storetest); a host application never calls
// them.
//
// Methods return ErrNotFound when a row does not exist and ErrDuplicate
// when a uniqueness constraint (including a primary key) would be
// violated; any other error is internal. A limit of zero or less returns
// nothing, except where a method says otherwise. "Locked" and "skipping
// locked rows" describe databases with row locks (Postgres); in SQLite the
// write transaction is exclusive and is itself the lock. Times are read
// back at microsecond precision, so values the engine truncates to
// microseconds compare Equal after a round trip.
//
// The list methods (ListDepositsPage and the others named ...Page, and
// ListBalanceTransactions) return one keyset page of an organization's
// rows, newest first after p.After (or oldest first after p.Before), up to
// p.Limit, only p.OrganizationID's, matching p's filters. Each is an index
// range scan in the list's order, so a page costs the same at any history
// size. A cursor is a position, not a row: it need not exist.
type Tx interface {
	OrganizationTx
	CredentialTx
	WalletTx
	DepositTx
	AttemptTx
	LedgerTx
	WithdrawalTx
	RefundTx
	EventTx
	WebhookTx
	AuditTx
	WorkTx

	// Console returns the rows of the operator console in this
	// transaction: they commit with the engine's.
	Console() ConsoleTx
}

// ConsoleTx is the storage of the operator console and the pages it
// serves to payers (payment links, the UddoktaPay-compatible checkout),
// kept apart from Tx because only the console, its payer pages and the
// compatibility API use it. It follows Tx's conventions.
type ConsoleTx interface {
	OperatorTx
	PaymentLinkTx
	CompatTx
}

// OrganizationTx is the part of Tx that stores the organizations.
type OrganizationTx interface {
	// CreateOrganization inserts org. Returns ErrDuplicate if the ID exists.
	CreateOrganization(ctx context.Context, org *Organization) error
	// GetOrganization returns ErrNotFound if id does not exist.
	GetOrganization(ctx context.Context, id string) (*Organization, error)
	// UpdateOrganization writes every mutable field of org.
	// Returns ErrNotFound if org.ID does not exist.
	UpdateOrganization(ctx context.Context, org *Organization) error
	// ListOrganizations returns all organizations, oldest first.
	ListOrganizations(ctx context.Context) ([]*Organization, error)
	// LockOrganization returns the organization, locked against concurrent
	// writers until the transaction ends: balance checks of withdrawals are
	// made under it. Returns ErrNotFound if it does not exist.
	LockOrganization(ctx context.Context, id string) (*Organization, error)
}

// CredentialTx is the part of Tx that stores the master key check and the
// API keys.
type CredentialTx interface {
	// GetMasterKeyCheck returns the sealed master key check, or ErrNotFound.
	GetMasterKeyCheck(ctx context.Context) ([]byte, error)
	// CreateMasterKeyCheck stores the master key check. Returns ErrDuplicate
	// if one is stored: it is written once and never replaced.
	CreateMasterKeyCheck(ctx context.Context, sealed []byte, at time.Time) error
	// AnySealedSecret returns one secret sealed under the master key (an API
	// key's signing secret or a webhook endpoint's secret) with the ID it is
	// sealed to, or ErrNotFound if the database holds none.
	AnySealedSecret(ctx context.Context) (id string, sealed []byte, err error)
	// CreateAPIKey inserts key. Returns ErrDuplicate if its ID or hash exists.
	CreateAPIKey(ctx context.Context, key *APIKey) error
	// GetAPIKey returns ErrNotFound if id does not exist.
	GetAPIKey(ctx context.Context, id string) (*APIKey, error)
	// GetAPIKeyByHash returns the key whose hash is hash, or ErrNotFound.
	GetAPIKeyByHash(ctx context.Context, hash []byte) (*APIKey, error)
	// ListAPIKeys returns the keys of an organization, oldest first.
	ListAPIKeys(ctx context.Context, organizationID string) ([]*APIKey, error)
	// UpdateAPIKey writes the signing secrets and expiry of key.
	// Returns ErrNotFound if key.ID does not exist.
	UpdateAPIKey(ctx context.Context, key *APIKey) error
}

// WalletTx is the part of Tx that stores the receiving wallets.
type WalletTx interface {
	// CreateWallet inserts w. Returns ErrDuplicate if the organization
	// already has a wallet with the same channel, operation and phone.
	CreateWallet(ctx context.Context, w *Wallet) error
	// GetWallet returns ErrNotFound unless id is a wallet of organizationID.
	GetWallet(ctx context.Context, organizationID, id string) (*Wallet, error)
	// ListWallets returns the wallets that match p, least recently assigned
	// first (never assigned first of all), then by ID.
	ListWallets(ctx context.Context, p ListWalletsParams) ([]*Wallet, error)
	// UpdateWallet writes every mutable field of w.
	// Returns ErrNotFound if w.ID does not exist.
	UpdateWallet(ctx context.Context, w *Wallet) error
	// LockWallet is GetWallet with the row locked until the transaction
	// ends.
	LockWallet(ctx context.Context, organizationID, id string) (*Wallet, error)
	// WalletDepositAmounts returns the amounts of the deposits assigned to
	// walletID since the given time whose status is not failed, expired or
	// cancelled: what counts against the wallet's daily limit.
	WalletDepositAmounts(ctx context.Context, walletID string, since time.Time) ([]decimal.Decimal, error)
}

// DepositTx is the part of Tx that stores the deposits: rows, lists and the
// console's searches.
type DepositTx interface {
	// CreateDeposit inserts d. Returns ErrDuplicate if the organization
	// already has a deposit with d.MerchantID (or the ID or checkout token
	// exists).
	CreateDeposit(ctx context.Context, d *Deposit) error
	// GetDeposit returns ErrNotFound unless id is a deposit of organizationID.
	GetDeposit(ctx context.Context, organizationID, id string) (*Deposit, error)
	// GetDepositByMerchantID returns ErrNotFound unless the organization has
	// a deposit with that merchant_id.
	GetDepositByMerchantID(ctx context.Context, organizationID, merchantID string) (*Deposit, error)
	// GetDepositByCheckoutToken returns ErrNotFound if no deposit has token.
	GetDepositByCheckoutToken(ctx context.Context, token string) (*Deposit, error)
	// UpdateDeposit writes every mutable field of d (status, verification,
	// provider transaction ID, timestamps). Returns ErrNotFound if d.ID
	// does not exist.
	UpdateDeposit(ctx context.Context, d *Deposit) error
	// UpdateDepositRefunds writes d's refund totals (RefundedAmount,
	// RefundReserved), status, verification state and updated_at: what
	// its refunds move, and only that, so that it never overwrites what
	// another path writes with UpdateDeposit. Returns ErrNotFound if d.ID
	// does not exist.
	UpdateDepositRefunds(ctx context.Context, d *Deposit) error
	// LockDeposit returns the deposit with id, locked against concurrent
	// writers until the transaction ends (SELECT ... FOR UPDATE where the
	// database needs it). Returns ErrNotFound if it does not exist.
	LockDeposit(ctx context.Context, id string) (*Deposit, error)
	// ListExpirableDeposits returns up to limit pending deposits whose
	// expires_at is at or before now, oldest deadline first, skipping rows
	// another transaction has locked.
	ListExpirableDeposits(ctx context.Context, now time.Time, limit int) ([]*Deposit, error)
	// ListDepositsPage honours Status, PaymentMethod, MerchantID,
	// ProviderTransactionID and the created range.
	ListDepositsPage(ctx context.Context, p PageParams) ([]*Deposit, error)
	// SearchDeposits returns up to p.Limit deposits matching every given
	// filter of p, newest first, through an index of the most selective
	// filter given (a transaction ID through attempts' (channel,
	// transaction_id) over p.Channels).
	SearchDeposits(ctx context.Context, p SearchDepositsParams) ([]*Deposit, error)
	// CountDepositsSince counts the deposits of an organization (all if
	// "") created at or after since, by status.
	CountDepositsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error)
}

// AttemptTx is the part of Tx that stores the verification attempts of
// deposits and the transaction IDs they hold.
type AttemptTx interface {
	// CreateAttempt inserts a. Returns ErrDuplicate if the organization has
	// an attempt with the same (Channel, TransactionID): within an
	// organization a submitted ID stays used. Another organization's
	// attempt of the ID is no obstacle (see MarkTransactionSucceeded).
	CreateAttempt(ctx context.Context, a *Attempt) error
	// GetAttempt returns ErrNotFound if id does not exist.
	GetAttempt(ctx context.Context, id string) (*Attempt, error)
	// LockAttempt is GetAttempt with the row locked until the transaction
	// ends. A worker finishing an attempt locks its deposit, then the
	// attempt, so that two workers can never both finish it.
	LockAttempt(ctx context.Context, id string) (*Attempt, error)
	// LockDepositAndAttempt is LockDeposit, then LockAttempt, in that
	// order, in one call: ErrNotFound if either is missing. A verdict
	// takes both locks first, and a store that can sends the two
	// statements in one round trip (Postgres).
	LockDepositAndAttempt(ctx context.Context, depositID, attemptID string) (*Deposit, *Attempt, error)
	// GetAttemptByTransactionID returns the attempt that holds a
	// transaction ID on a channel for an organization: the organization's
	// own attempt of it, else the attempt of any organization that
	// succeeded with it (GetSucceededAttempt); ErrNotFound if neither
	// exists. One statement: a submission's only lookup.
	GetAttemptByTransactionID(ctx context.Context, organizationID, channel, transactionID string) (*Attempt, error)
	// MarkTransactionSucceeded records, in the transaction that makes a
	// succeeded, that a's (Channel, TransactionID) has succeeded a deposit:
	// one payment succeeds at most one deposit, in any organization.
	// Returns ErrDuplicate if the ID is marked already (by any attempt),
	// and then leaves the transaction usable (on Postgres it is not
	// aborted), so that the caller can fail the attempt instead.
	MarkTransactionSucceeded(ctx context.Context, a *Attempt) error
	// GetSucceededAttempt returns the attempt, of any organization, whose
	// success marked a transaction ID on a channel, or ErrNotFound.
	GetSucceededAttempt(ctx context.Context, channel, transactionID string) (*Attempt, error)
	// ListAttempts returns the attempts of a deposit, oldest first.
	ListAttempts(ctx context.Context, depositID string) ([]*Attempt, error)
	// UpdateAttempt writes status, failure code, tries, next run, lease and
	// updated_at. Returns ErrNotFound if a.ID does not exist.
	UpdateAttempt(ctx context.Context, a *Attempt) error
	// ClaimDueAttempts leases up to p.Limit running attempts that are due
	// (NextRunAt <= p.Now) and not leased (LeasedUntil <= p.Now), earliest
	// due first, skipping rows another transaction has locked: it sets
	// their LeaseOwner and LeasedUntil and returns them so updated.
	ClaimDueAttempts(ctx context.Context, p ClaimParams) ([]*Attempt, error)
}

// LedgerTx is the part of Tx that stores the double-entry ledger, its
// maintained balances and balance transactions.
type LedgerTx interface {
	// CreateJournal inserts a journal and its entries, and adds each entry
	// to its account's balance row, all in the caller's transaction; for
	// each balance account (BalanceAccounts) it moves, it also writes a
	// BalanceTransaction with the balance row's new value. The
	// engine passes only balanced journals of whole-poisha amounts.
	// Balance rows are updated in account order, so two journals never
	// wait for each other's rows in opposite orders.
	CreateJournal(ctx context.Context, j *Journal) error
	// AccountBalances returns the balance of each account of an
	// organization that has any entries, from the rows CreateJournal
	// maintains: its cost does not grow with the ledger. It always equals
	// SumEntries.
	AccountBalances(ctx context.Context, organizationID string) (map[string]decimal.Decimal, error)
	// SumEntries returns the sum of the entries of each account of an
	// organization that has any: the truth the balance rows are checked
	// against. Its cost grows with the ledger; no request calls it.
	SumEntries(ctx context.Context, organizationID string) (map[string]decimal.Decimal, error)
	// ListJournals returns an organization's journals with their entries,
	// oldest first.
	ListJournals(ctx context.Context, organizationID string) ([]*Journal, error)
	// ListBalanceTransactions honours Account and the created range. The
	// rows are written by CreateJournal: one per journal and balance
	// account it moves, with the account's balance after it.
	ListBalanceTransactions(ctx context.Context, p PageParams) ([]*BalanceTransaction, error)
	// GetBalanceTransaction returns ErrNotFound unless id is a balance
	// transaction of organizationID.
	GetBalanceTransaction(ctx context.Context, organizationID, id string) (*BalanceTransaction, error)
}

// WithdrawalTx is the part of Tx that stores the withdrawals and their payouts.
type WithdrawalTx interface {
	// CreateWithdrawal inserts w. Returns ErrDuplicate if the organization
	// already has a withdrawal with w.MerchantID.
	CreateWithdrawal(ctx context.Context, w *Withdrawal) error
	// GetWithdrawal returns ErrNotFound unless id is a withdrawal of
	// organizationID.
	GetWithdrawal(ctx context.Context, organizationID, id string) (*Withdrawal, error)
	// GetWithdrawalByMerchantID returns ErrNotFound unless the
	// organization has a withdrawal with that merchant_id.
	GetWithdrawalByMerchantID(ctx context.Context, organizationID, merchantID string) (*Withdrawal, error)
	// LockWithdrawal is GetWithdrawal with the row locked until the
	// transaction ends.
	LockWithdrawal(ctx context.Context, organizationID, id string) (*Withdrawal, error)
	// UpdateWithdrawal writes status, payout step, provider reference,
	// failure reason, tries, next run, lease and updated_at.
	// Returns ErrNotFound if w.ID does not exist.
	UpdateWithdrawal(ctx context.Context, w *Withdrawal) error
	// UpdateLeasedWithdrawal is UpdateWithdrawal for the worker that
	// claimed w: it writes only while w is processing and leased to owner
	// until leasedUntil (as ClaimDuePayouts left it), and otherwise writes
	// nothing and returns ErrLeaseLost. The lease is the lock: a payout
	// step reads nothing first, so in a Pipeline the write is queued with
	// the transaction's others, and ErrLeaseLost then fails the
	// transaction.
	UpdateLeasedWithdrawal(ctx context.Context, w *Withdrawal, owner string, leasedUntil time.Time) error
	// ClaimDuePayouts leases up to p.Limit processing withdrawals that are
	// due and not leased, like ClaimDueAttempts.
	ClaimDuePayouts(ctx context.Context, p ClaimParams) ([]*Withdrawal, error)
	// TakenWithdrawalMerchantIDs returns which of merchantIDs the
	// organization has withdrawals with (the transaction's own included):
	// a batch of withdrawal creates looks them up in one statement, under
	// the organization's lock, instead of learning it from each insert.
	TakenWithdrawalMerchantIDs(ctx context.Context, organizationID string, merchantIDs []string) (map[string]bool, error)
	// LockWithdrawalGate takes the organization's lock (LockOrganization)
	// and then reads what a batch of its withdrawal creates checks under
	// it: which of merchantIDs are taken (TakenWithdrawalMerchantIDs), its
	// balances (AccountBalances) and its enabled webhook endpoints
	// (ListWebhookEndpoints), each as that method gives it, in one round
	// trip where the store can (Postgres: one pipeline, each read after
	// the lock is granted). Returns ErrNotFound if the organization does
	// not exist.
	LockWithdrawalGate(ctx context.Context, organizationID string, merchantIDs []string) (*WithdrawalGate, error)
	// ListWithdrawalsPage honours the filters of ListDepositsPage;
	// ProviderTransactionID matches the provider reference.
	ListWithdrawalsPage(ctx context.Context, p PageParams) ([]*Withdrawal, error)
	// SearchWithdrawals returns up to p.Limit withdrawals matching p,
	// newest first.
	SearchWithdrawals(ctx context.Context, p SearchWithdrawalsParams) ([]*Withdrawal, error)
	// CountWithdrawalsSince is CountDepositsSince for withdrawals.
	CountWithdrawalsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error)
}

// RefundTx is the part of Tx that stores the refunds of deposits.
type RefundTx interface {
	// CreateRefund inserts r. Returns ErrDuplicate if the organization
	// already has a refund with r.MerchantID (or the ID exists).
	CreateRefund(ctx context.Context, r *Refund) error
	// GetRefund returns ErrNotFound unless id is a refund of
	// organizationID.
	GetRefund(ctx context.Context, organizationID, id string) (*Refund, error)
	// GetRefundByMerchantID returns ErrNotFound unless the organization
	// has a refund with that merchant_id (through the UNIQUE
	// (merchant_id, organization_id) index).
	GetRefundByMerchantID(ctx context.Context, organizationID, merchantID string) (*Refund, error)
	// UpdateRefund writes status, failure code and reason, refund step,
	// provider reference, tries, next run, lease and updated_at.
	// Returns ErrNotFound if r.ID does not exist.
	UpdateRefund(ctx context.Context, r *Refund) error
	// UpdateLeasedRefund is UpdateRefund for the worker that claimed r,
	// as UpdateLeasedWithdrawal: it writes only while r is processing and
	// leased to owner until leasedUntil, and otherwise writes nothing and
	// returns ErrLeaseLost.
	UpdateLeasedRefund(ctx context.Context, r *Refund, owner string, leasedUntil time.Time) error
	// ClaimDueRefunds leases up to p.Limit processing refunds that are due
	// and not leased, like ClaimDuePayouts, through the refunds_due
	// partial index.
	ClaimDueRefunds(ctx context.Context, p ClaimParams) ([]*Refund, error)
	// ListRefundsPage is a list page (see ListDepositsPage) honouring
	// DepositID and the created range.
	ListRefundsPage(ctx context.Context, p PageParams) ([]*Refund, error)
}

// EventTx is the part of Tx that stores the events every state change writes.
type EventTx interface {
	// CreateEvent inserts an event into the outbox.
	CreateEvent(ctx context.Context, e *Event) error
	// GetEvent returns ErrNotFound if id does not exist.
	GetEvent(ctx context.Context, id string) (*Event, error)
	// ListEvents returns the events matching p, oldest first.
	ListEvents(ctx context.Context, p ListEventsParams) ([]*Event, error)
	// ListEventsPage honours Type, ResourceID and the created range.
	ListEventsPage(ctx context.Context, p PageParams) ([]*Event, error)
}

// WebhookTx is the part of Tx that stores the webhook endpoints, their
// deliveries and delivery attempts.
type WebhookTx interface {
	// CreateWebhookEndpoint inserts ep.
	CreateWebhookEndpoint(ctx context.Context, ep *WebhookEndpoint) error
	// GetWebhookEndpoint returns ErrNotFound if id does not exist.
	GetWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error)
	// LockWebhookEndpoint is GetWebhookEndpoint with the row locked until
	// the transaction ends.
	LockWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error)
	// ListWebhookEndpoints returns an organization's endpoints, oldest
	// first; only the enabled ones if enabledOnly.
	ListWebhookEndpoints(ctx context.Context, organizationID string, enabledOnly bool) ([]*WebhookEndpoint, error)
	// UpdateWebhookEndpoint writes URL, secrets, enabled, disabled reason,
	// failing-since and updated_at. Returns ErrNotFound if it does not exist.
	UpdateWebhookEndpoint(ctx context.Context, ep *WebhookEndpoint) error
	// DeleteWebhookEndpoint removes an endpoint with its deliveries and
	// their attempts. Returns ErrNotFound if it does not exist.
	DeleteWebhookEndpoint(ctx context.Context, id string) error
	// CountDisabledWebhookEndpoints counts every organization's disabled
	// webhook endpoints through the partial index of the disabled ones, so
	// that its cost follows them, not the endpoints or their deliveries.
	CountDisabledWebhookEndpoints(ctx context.Context) (int, error)
	// CreateDelivery inserts d. Returns ErrDuplicate if the event already
	// has a delivery to the endpoint.
	CreateDelivery(ctx context.Context, d *Delivery) error
	// GetDelivery returns ErrNotFound if id does not exist.
	GetDelivery(ctx context.Context, id string) (*Delivery, error)
	// LockDelivery is GetDelivery with the row locked until the
	// transaction ends.
	LockDelivery(ctx context.Context, id string) (*Delivery, error)
	// UpdateDelivery writes status, attempts, next attempt, lease, last
	// status and error, delivered_at and updated_at.
	UpdateDelivery(ctx context.Context, d *Delivery) error
	// ListDeliveries returns the deliveries matching p, oldest first.
	ListDeliveries(ctx context.Context, p ListDeliveriesParams) ([]*Delivery, error)
	// ClaimDueDeliveries leases pending deliveries that are due and not
	// leased, of enabled endpoints not in p.ExcludeEndpoints, at most
	// p.PerEndpoint per endpoint and p.Limit in all, earliest due first.
	ClaimDueDeliveries(ctx context.Context, p ClaimDeliveriesParams) ([]*Delivery, error)
	// CreateDeliveryAttempt records one post.
	CreateDeliveryAttempt(ctx context.Context, a *DeliveryAttempt) error
	// ListDeliveryAttempts returns a delivery's posts, oldest first.
	ListDeliveryAttempts(ctx context.Context, deliveryID string) ([]*DeliveryAttempt, error)
}

// AuditTx is the part of Tx that stores the append-only audit log.
type AuditTx interface {
	// AppendAudit inserts an entry into the append-only audit log. Returns
	// ErrDuplicate if its ID exists. There is no way to change or remove an
	// entry.
	AppendAudit(ctx context.Context, e *AuditEntry) error
	// ListAudit returns the audit entries matching p, oldest first.
	ListAudit(ctx context.Context, p ListAuditParams) ([]*AuditEntry, error)
}

// WorkTx is the part of Tx that stores the background work across nouns:
// queue depths and leases.
type WorkTx interface {
	// CountQueues counts the running attempts (processing, delayed), the
	// processing withdrawals and refunds and the pending deliveries, with
	// the creation time of the oldest of each, through the partial indexes
	// their claims use (attempts_due, withdrawals_due, refunds_due,
	// deliveries_due), so that its cost
	// follows the work waiting and not the history.
	CountQueues(ctx context.Context) (*Queues, error)
	// ReleaseLeases gives up every lease owner holds on open work (running
	// attempts, processing withdrawals and refunds, pending deliveries): it
	// clears their LeaseOwner and LeasedUntil so that any worker may claim
	// them at once.
	// Rows leased by other owners are left alone.
	ReleaseLeases(ctx context.Context, owner string) error
}

// OperatorTx is the part of ConsoleTx that stores the console's operators
// and their sessions.
type OperatorTx interface {
	// CreateOperator inserts op. Returns ErrDuplicate if its ID or email
	// exists.
	CreateOperator(ctx context.Context, op *Operator) error
	// GetOperator returns ErrNotFound if id does not exist.
	GetOperator(ctx context.Context, id string) (*Operator, error)
	// LockOperator is GetOperator with the row locked until the
	// transaction ends.
	LockOperator(ctx context.Context, id string) (*Operator, error)
	// GetOperatorByEmail returns the operator with the (normalized) email,
	// or ErrNotFound.
	GetOperatorByEmail(ctx context.Context, email string) (*Operator, error)
	// GetOperatorBySetupTokenHash returns the operator whose setup token
	// hashes to hash, or ErrNotFound.
	GetOperatorBySetupTokenHash(ctx context.Context, hash []byte) (*Operator, error)
	// ListOperators returns an organization's operators, or all if
	// organizationID is "", oldest first.
	ListOperators(ctx context.Context, organizationID string) ([]*Operator, error)
	// UpdateOperator writes every mutable field of op (password hash,
	// second factor, setup token, failed logins, lockout, disabled_at,
	// updated_at). Returns ErrNotFound if op.ID does not exist.
	UpdateOperator(ctx context.Context, op *Operator) error
	// CreateOperatorSession inserts s. Returns ErrDuplicate if its ID or
	// token hash exists.
	CreateOperatorSession(ctx context.Context, s *OperatorSession) error
	// GetOperatorSessionByHash returns the session whose token hashes to
	// hash, or ErrNotFound.
	GetOperatorSessionByHash(ctx context.Context, hash []byte) (*OperatorSession, error)
	// UpdateOperatorSession writes last_seen_at and revoked_at.
	// Returns ErrNotFound if s.ID does not exist.
	UpdateOperatorSession(ctx context.Context, s *OperatorSession) error
	// RevokeOperatorSessions revokes, at now, every open session of an
	// operator.
	RevokeOperatorSessions(ctx context.Context, operatorID string, now time.Time) error
}

// PaymentLinkTx is the part of ConsoleTx that stores the payment links
// operators share with payers.
type PaymentLinkTx interface {
	// CreatePaymentLink inserts l. Returns ErrDuplicate if its ID or
	// token exists.
	CreatePaymentLink(ctx context.Context, l *PaymentLink) error
	// GetPaymentLink returns ErrNotFound unless id is a link of
	// organizationID.
	GetPaymentLink(ctx context.Context, organizationID, id string) (*PaymentLink, error)
	// LockPaymentLink is GetPaymentLink with the row locked until the
	// transaction ends.
	LockPaymentLink(ctx context.Context, organizationID, id string) (*PaymentLink, error)
	// GetPaymentLinkByToken returns the link of token, or ErrNotFound.
	GetPaymentLinkByToken(ctx context.Context, token string) (*PaymentLink, error)
	// ListPaymentLinks returns up to limit links of an organization,
	// newest first.
	ListPaymentLinks(ctx context.Context, organizationID string, limit int) ([]*PaymentLink, error)
	// UpdatePaymentLink writes deposit_id, deposits, paid_deposit_id and
	// updated_at.
	// Returns ErrNotFound if l.ID does not exist.
	UpdatePaymentLink(ctx context.Context, l *PaymentLink) error
}

// CompatTx is the part of ConsoleTx that stores the UddoktaPay-compatible
// checkout: its API keys, invoices and IPNs.
type CompatTx interface {
	// PutCompatKey stores an organization's compat key, replacing the one
	// it had. Returns ErrDuplicate if another organization has the hash.
	PutCompatKey(ctx context.Context, k *CompatKey) error
	// DeleteCompatKey removes an organization's compat key; ErrNotFound
	// when it has none.
	DeleteCompatKey(ctx context.Context, organizationID string) error
	// GetCompatKeyByHash returns the compat key whose hash is hash, or
	// ErrNotFound.
	GetCompatKeyByHash(ctx context.Context, hash []byte) (*CompatKey, error)
	// GetCompatKey returns an organization's compat key, or ErrNotFound.
	GetCompatKey(ctx context.Context, organizationID string) (*CompatKey, error)
	// CreateCompatInvoice inserts inv. Returns ErrDuplicate if its link
	// has one.
	CreateCompatInvoice(ctx context.Context, inv *CompatInvoice) error
	// GetCompatInvoice returns the invoice of a link of organizationID, or
	// ErrNotFound.
	GetCompatInvoice(ctx context.Context, organizationID, linkID string) (*CompatInvoice, error)
	// CreateCompatIPN inserts ipn. Returns ErrDuplicate if its invoice has
	// one.
	CreateCompatIPN(ctx context.Context, ipn *CompatIPN) error
	// GetCompatIPN returns the IPN of a link, or ErrNotFound.
	GetCompatIPN(ctx context.Context, linkID string) (*CompatIPN, error)
	// LockCompatIPN is GetCompatIPN with the row locked until the
	// transaction ends.
	LockCompatIPN(ctx context.Context, linkID string) (*CompatIPN, error)
	// ClaimDueCompatIPNs leases up to p.Limit pending IPNs that are due and
	// not leased, earliest due first, skipping rows another transaction
	// has locked.
	ClaimDueCompatIPNs(ctx context.Context, p ClaimParams) ([]*CompatIPN, error)
	// ListCompatIPNs returns up to limit IPNs of an organization, newest
	// first, from an index of the organization's: the console's list.
	ListCompatIPNs(ctx context.Context, organizationID string, limit int) ([]*CompatIPN, error)
	// UpdateCompatIPN writes status, attempts, next attempt, lease, last
	// outcome and updated_at. Returns ErrNotFound if it does not exist.
	UpdateCompatIPN(ctx context.Context, ipn *CompatIPN) error
}

// ListAuditParams filters ListAudit. An empty OrganizationID matches all.
type ListAuditParams struct {
	OrganizationID string
	Limit          int // zero means no limit
}

// ClaimParams selects and leases due work.
type ClaimParams struct {
	Now         time.Time
	Owner       string
	LeasedUntil time.Time
	Limit       int
}

// ListEventsParams filters ListEvents. Empty strings match all.
type ListEventsParams struct {
	OrganizationID string
	ResourceID     string
	Limit          int // zero means no limit
}

// ListWalletsParams filters ListWallets. Empty strings and false match all.
type ListWalletsParams struct {
	OrganizationID string
	Channel        string
	Operation      string
	EnabledOnly    bool
	// ForUpdate locks the listed wallets until the transaction ends: a
	// deposit picking its recipient holds the pool, so limits are checked
	// and last-assigned times written without a concurrent pick in between.
	ForUpdate bool
}
