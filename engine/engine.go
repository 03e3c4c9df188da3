// Package engine is payd's domain: organizations and their credentials,
// receiving wallets, deposits and their verification, withdrawals and the
// ledger. It knows no SQL and no HTTP: it talks to a database through Store,
// to money networks through Provider, and reads time from a Clock.
package engine

import (
	"errors"
	"time"

	"github.com/benbjohnson/clock"
)

// Config holds what an Engine needs.
type Config struct {
	Store    Store
	Provider Provider
	// Clock defaults to the wall clock; tests pass clock.NewMock().
	Clock   clock.Clock
	Keyring *Keyring
}

// Engine carries out every operation of payd.
type Engine struct {
	store    Store
	provider Provider
	clock    clock.Clock
	keyring  *Keyring
}

// New returns an Engine over cfg.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil || cfg.Provider == nil || cfg.Keyring == nil {
		return nil, errors.New("engine: Store, Provider and Keyring are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	return &Engine{store: cfg.Store, provider: cfg.Provider, clock: cfg.Clock, keyring: cfg.Keyring}, nil
}

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clock }

// now is the current time in UTC at the microsecond precision both stores
// keep, so a value read back equals the value written.
func (e *Engine) now() time.Time { return e.clock.Now().UTC().Truncate(time.Microsecond) }

// notFound turns a store's ErrNotFound into the client-facing not_found
// error for the named resource and passes other errors through.
func notFound(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return Errorf(CodeNotFound, "%s not found", what)
	}
	return err
}
