package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
)

// database is an open store with the master key checked against it.
type database struct {
	store   payd.Store
	keyring *engine.Keyring
	// created is set when this command created the SQLite file.
	created bool
	// key names the master key: "PAYD_MASTER_KEY" or the key file's path.
	key string
	// keyCreated is set when this command wrote a new key file.
	keyCreated bool
	// checkRecorded is set when this command recorded the database's
	// master key check (a fresh database, or one from before the check).
	checkRecorded bool
}

// keyFile is the master key file the flags name ("" for a Postgres
// database without --master-key-file, which loadKeyring refuses).
func (f *storeFlags) keyFile() string {
	switch {
	case f.masterKeyFile != "":
		return f.masterKeyFile
	case isPostgres(f.db):
		return ""
	}
	return f.db + ".key"
}

// hint is the flags that name this database and key in a suggested
// command. A database URL is not repeated: it may hold a password.
func (f *storeFlags) hint() string {
	flags := " --db " + f.db
	if isPostgres(f.db) {
		flags = " --db <the same database URL>"
	}
	if f.masterKeyFile != "" {
		flags += " --master-key-file " + f.masterKeyFile
	}
	return flags
}

// createHint says how a database comes to exist, for an admin command
// given a path where there is none.
func createHint(db string) string {
	return fmt.Sprintf("payd serve --db %s creates one on its first start, or payd admin init --db %s creates one now", db, db)
}

// openDatabase opens the database the flags name and its master key, and
// checks that this key is the one that sealed its secrets. A missing SQLite
// file is created only if create is set: admin commands never create a
// database by accident (a mistyped --db). A missing key file is created
// only for a database that holds nothing sealed yet.
func (f *storeFlags) openDatabase(ctx context.Context, create bool) (*database, error) {
	d := &database{}
	if !isPostgres(f.db) {
		_, err := os.Stat(f.db)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !create:
			return nil, fmt.Errorf("no database at %s (admin commands never create one): %s", f.db, createHint(f.db))
		case errors.Is(err, fs.ErrNotExist):
			d.created = true
		case err != nil:
			return nil, fmt.Errorf("database %s: %w", f.db, err)
		}
	}
	store, err := openStore(ctx, f.db)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", redactDSN(f.db), err)
	}
	d.store = store
	if err := d.loadKey(ctx, f); err != nil {
		store.Close()
		return nil, err
	}
	return d, nil
}

func (d *database) loadKey(ctx context.Context, f *storeFlags) error {
	db := redactDSN(f.db)
	d.key = "PAYD_MASTER_KEY"
	if os.Getenv("PAYD_MASTER_KEY") == "" {
		d.key = f.keyFile()
		if d.key != "" {
			_, err := os.Stat(d.key)
			if errors.Is(err, fs.ErrNotExist) {
				inUse, err := engine.MasterKeyInUse(ctx, d.store)
				if err != nil {
					return fmt.Errorf("database %s: %w", db, err)
				}
				if inUse {
					return fmt.Errorf("master key file %s does not exist, but database %s holds secrets sealed under a master key: "+
						"restore that key file from your backup, or name it with --master-key-file (PAYD_MASTER_KEY_FILE) or PAYD_MASTER_KEY; "+
						"payd does not make a new key, which could not open them", d.key, db)
				}
				d.keyCreated = true // unless another process writes it first; only the startup line says so
			}
		}
	}
	keyring, err := f.loadKeyring()
	if err != nil {
		return err
	}
	d.keyring = keyring
	d.checkRecorded, err = engine.CheckMasterKey(ctx, d.store, keyring)
	if errors.Is(err, engine.ErrWrongMasterKey) {
		what := "master key file " + d.key
		if d.key == "PAYD_MASTER_KEY" {
			what = "the master key in PAYD_MASTER_KEY"
		}
		return fmt.Errorf("%s is not the key that sealed the secrets of database %s, so every signed request would fail: "+
			"give the key this database was created with (--master-key-file, PAYD_MASTER_KEY_FILE or PAYD_MASTER_KEY), "+
			"restoring its file from your backup if it was lost", what, db)
	}
	if err != nil {
		return fmt.Errorf("database %s: %w", db, err)
	}
	return nil
}
