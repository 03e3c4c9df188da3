package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// The master key check is a known value sealed under the master key and
// stored in the database, so that a process given another key than the one
// that sealed the database's secrets refuses to start, instead of starting
// and failing every signed request and webhook.
const (
	keyCheckContext   = "payd:master-key-check"
	keyCheckPlaintext = "payd master key check v1"
)

// ErrWrongMasterKey is returned by CheckMasterKey when the master key is not
// the one that sealed the database's key check or secrets.
var ErrWrongMasterKey = errors.New("the master key is not the one that sealed this database's secrets")

// MasterKeyInUse reports whether the database holds anything sealed under a
// master key: a key check or a secret. A process that finds its master key
// missing must not make a new one for such a database.
func MasterKeyInUse(ctx context.Context, store Store) (bool, error) {
	var inUse bool
	err := store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		inUse = false
		if _, err := tx.GetMasterKeyCheck(ctx); !errors.Is(err, ErrNotFound) {
			inUse = err == nil
			return err
		}
		_, _, err := tx.AnySealedSecret(ctx)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		inUse = err == nil
		return err
	})
	return inUse, err
}

// CheckMasterKey verifies that keyring holds the master key of the
// database, and returns ErrWrongMasterKey if it does not. A database without
// a key check gets one (recorded is true): sealed under keyring's key if
// that key opens the database's existing secrets, or if there are none, as
// on a fresh database. Call it once at startup, before serving.
func CheckMasterKey(ctx context.Context, store Store, keyring *Keyring) (recorded bool, err error) {
	for range 3 {
		var duplicate bool
		err := store.InTx(ctx, func(ctx context.Context, tx Tx) error {
			recorded, duplicate = false, false
			check, err := tx.GetMasterKeyCheck(ctx)
			switch {
			case err == nil:
				plain, err := keyring.Open(check, keyCheckContext)
				if err != nil || !bytes.Equal(plain, []byte(keyCheckPlaintext)) {
					return ErrWrongMasterKey
				}
				return nil
			case !errors.Is(err, ErrNotFound):
				return err
			}
			// A database from before the key check: the key must open what
			// is already sealed before its check is recorded.
			id, sealed, err := tx.AnySealedSecret(ctx)
			switch {
			case err == nil:
				if _, err := keyring.Open(sealed, id); err != nil {
					return ErrWrongMasterKey
				}
			case !errors.Is(err, ErrNotFound):
				return err
			}
			err = tx.CreateMasterKeyCheck(ctx, keyring.Seal([]byte(keyCheckPlaintext), keyCheckContext), time.Now().UTC().Truncate(time.Microsecond))
			if errors.Is(err, ErrDuplicate) {
				duplicate = true // another process recorded one first: check against it
				return nil
			}
			recorded = err == nil
			return err
		})
		if err != nil {
			if errors.Is(err, ErrWrongMasterKey) {
				return false, err
			}
			return false, fmt.Errorf("master key check: %w", err)
		}
		if !duplicate {
			return recorded, nil
		}
	}
	return false, errors.New("master key check: recorded by another process but not found")
}
