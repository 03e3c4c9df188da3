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

// Tx is what the engine can do inside a transaction. Methods return
// ErrNotFound when a row does not exist and ErrDuplicate when a uniqueness
// constraint would be violated; any other error is internal.
type Tx interface {
	// CreateOrganization inserts org. Returns ErrDuplicate if the ID exists.
	CreateOrganization(ctx context.Context, org *Organization) error
	// GetOrganization returns ErrNotFound if id does not exist.
	GetOrganization(ctx context.Context, id string) (*Organization, error)
	// UpdateOrganization writes every mutable field of org.
	// Returns ErrNotFound if org.ID does not exist.
	UpdateOrganization(ctx context.Context, org *Organization) error
	// ListOrganizations returns all organizations, oldest first.
	ListOrganizations(ctx context.Context) ([]*Organization, error)

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
	// WalletDepositAmounts returns the amounts of the deposits assigned to
	// walletID since the given time whose status is not failed, expired or
	// cancelled: what counts against the wallet's daily limit.
	WalletDepositAmounts(ctx context.Context, walletID string, since time.Time) ([]decimal.Decimal, error)

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
}

// ListWalletsParams filters ListWallets. Empty strings and false match all.
type ListWalletsParams struct {
	OrganizationID string
	Channel        string
	Operation      string
	EnabledOnly    bool
}
