package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// keyringOf is a keyring whose master key is 32 bytes of b.
func keyringOf(t *testing.T, b byte) *engine.Keyring {
	t.Helper()
	key := make([]byte, engine.MasterKeySize)
	for i := range key {
		key[i] = b
	}
	k, err := engine.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// emptyStore is a fresh, migrated store of the kind.
func emptyStore(t *testing.T, kind string) engine.Store {
	t.Helper()
	var s engine.Store
	var err error
	if kind == "postgres" {
		s, err = postgres.Open(context.Background(), pgtest.URL(t))
	} else {
		s, err = sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func hasKeyCheck(t *testing.T, s engine.Store) bool {
	t.Helper()
	var found bool
	err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetMasterKeyCheck(ctx)
		found = err == nil
		if errors.Is(err, engine.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestMasterKeyCheckFreshDatabase: the first key used is recorded; another
// key is refused from then on.
func TestMasterKeyCheckFreshDatabase(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			s := emptyStore(t, kind)
			if inUse, err := engine.MasterKeyInUse(ctx, s); err != nil || inUse {
				t.Fatalf("MasterKeyInUse of a fresh database = %v, %v", inUse, err)
			}
			if recorded, err := engine.CheckMasterKey(ctx, s, keyringOf(t, 1)); err != nil || !recorded {
				t.Fatalf("first CheckMasterKey = %v, %v, want recorded", recorded, err)
			}
			if inUse, err := engine.MasterKeyInUse(ctx, s); err != nil || !inUse {
				t.Fatalf("MasterKeyInUse after the check = %v, %v", inUse, err)
			}
			if recorded, err := engine.CheckMasterKey(ctx, s, keyringOf(t, 1)); err != nil || recorded {
				t.Fatalf("CheckMasterKey with the same key = %v, %v", recorded, err)
			}
			if _, err := engine.CheckMasterKey(ctx, s, keyringOf(t, 2)); !errors.Is(err, engine.ErrWrongMasterKey) {
				t.Fatalf("CheckMasterKey with another key = %v, want ErrWrongMasterKey", err)
			}
		})
	}
}

// TestMasterKeyCheckExistingSecrets: a database from before the key check
// gets one only from a key that opens its sealed secrets.
func TestMasterKeyCheckExistingSecrets(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t) // its organization's API key is sealed under f.keyring
		if inUse, err := engine.MasterKeyInUse(f.ctx, f.store); err != nil || !inUse {
			t.Fatalf("MasterKeyInUse with a sealed secret = %v, %v", inUse, err)
		}
		if _, err := engine.CheckMasterKey(f.ctx, f.store, keyringOf(t, 7)); !errors.Is(err, engine.ErrWrongMasterKey) {
			t.Fatalf("CheckMasterKey with another key = %v, want ErrWrongMasterKey", err)
		}
		if hasKeyCheck(t, f.store) {
			t.Fatal("a wrong key recorded a key check")
		}
		if recorded, err := engine.CheckMasterKey(f.ctx, f.store, f.keyring); err != nil || !recorded {
			t.Fatalf("CheckMasterKey with the sealing key = %v, %v, want recorded", recorded, err)
		}
		if _, err := engine.CheckMasterKey(f.ctx, f.store, keyringOf(t, 7)); !errors.Is(err, engine.ErrWrongMasterKey) {
			t.Fatalf("CheckMasterKey with another key after the check = %v", err)
		}
	})
}

// TestMasterKeyCheckConcurrentFirstStarts: processes starting together on a
// fresh database with two keys: one key wins, every process with the other
// is refused, and the check recorded is the winner's.
func TestMasterKeyCheckConcurrentFirstStarts(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			s := emptyStore(t, kind)
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			recorded := make([]bool, n)
			for i := range n {
				wg.Go(func() { recorded[i], errs[i] = engine.CheckMasterKey(ctx, s, keyringOf(t, byte(i%2+1))) })
			}
			wg.Wait()
			okKeys, records := map[int]bool{}, 0
			for i, err := range errs {
				switch {
				case err == nil:
					okKeys[i%2] = true
				case !errors.Is(err, engine.ErrWrongMasterKey):
					t.Fatalf("start %d: %v", i, err)
				}
				if recorded[i] {
					records++
				}
			}
			if len(okKeys) != 1 || records != 1 {
				t.Fatalf("keys accepted %v, checks recorded %d: want one key and one record", okKeys, records)
			}
			for winner := range okKeys {
				if _, err := engine.CheckMasterKey(ctx, s, keyringOf(t, byte(winner+1))); err != nil {
					t.Fatalf("the winning key is refused afterwards: %v", err)
				}
			}
		})
	}
}
