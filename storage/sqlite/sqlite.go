// Package sqlite is payd's SQLite store: an engine.Store over one database
// file, through the pure-Go modernc.org/sqlite driver.
//
// SQLite allows one writer at a time, so the store keeps two pools on the
// file: a single-connection writer pool whose transactions begin IMMEDIATE
// (they take the write lock up front and so never fail to upgrade a read
// lock halfway), and a pool of read-only connections that, in WAL mode, read
// a snapshot without ever waiting for the writer.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/payd-engine/payd/engine"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/payd-engine/payd/storage/internal/txretry"
)

// Store is an engine.Store on an SQLite database file.
type Store struct {
	writer *sql.DB
	reader *sql.DB
	lib    *libReaders // ReadOne's one-row reads
	// writeBusy is the nanoseconds write transactions held the writer
	// (PoolStats).
	writeBusy atomic.Int64
}

var (
	_ engine.Store     = (*Store)(nil)
	_ engine.OneReader = (*Store)(nil)
)

// busyTimeoutMS is how long a connection waits for a lock inside SQLite
// before reporting SQLITE_BUSY, which InTx then retries.
const busyTimeoutMS = 10000

// Retry bounds of a transaction that keeps finding the database busy.
const (
	maxAttempts  = 30
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = 250 * time.Millisecond
)

// Open opens (creating if needed) the SQLite database at path and applies
// the store's own migrations and those of lines (see Migrate): the
// convenience of a program that owns its database. path is a file name,
// not a URI: every pool must open the same file, so ":memory:" does not
// work.
func Open(ctx context.Context, path string, lines ...engine.MigrationLine) (*Store, error) {
	// A '?' is refused: whoever writes "x.db?mode=ro" expects parameters,
	// not a file of that name.
	if path == "" || strings.HasPrefix(path, "file:") || path == ":memory:" || strings.Contains(path, "?") {
		return nil, fmt.Errorf("sqlite: invalid database path %q: want a plain file name", path)
	}
	// A new database is created owner-only: it holds payers' phones and SMS
	// texts. SQLite gives its -wal and -shm files the database file's mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	s, err := newStore(path)
	if err != nil {
		return nil, err
	}
	// Migrate connects the writer first: it switches the file to WAL and
	// creates the schema before any reader looks at it.
	if _, err := s.Migrate(ctx, lines...); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// New builds a store on the database file db has open, changing nothing
// in it: the host decides when its schema changes (Migrate) and keeps
// using db for its own work. db must be modernc.org/sqlite's ("sqlite")
// on a file, not ":memory:".
//
// SQLite allows one writer at a time and payd's reads must never take the
// write lock, so the store does not run its transactions on db: it opens
// connections of its own on the same file, a writer (one connection,
// IMMEDIATE transactions, foreign keys on, synchronous FULL, which
// switches the file to WAL on its first connection, a persistent setting)
// and read-only pools (query_only), and Close closes those, never db.
func New(db *sql.DB) (*Store, error) {
	if _, ok := db.Driver().(*sqlite.Driver); !ok {
		return nil, fmt.Errorf("sqlite: New: db's driver is %T, want modernc.org/sqlite's", db.Driver())
	}
	ctx := context.Background()
	var file string
	err := retry(ctx, func() error {
		return db.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: New: %w", err)
	}
	if file == "" {
		return nil, errors.New("sqlite: New: db is not on a file (\":memory:\" or temporary): the store opens its own connections on db's file")
	}
	return newStore(file)
}

// newStore makes the store's pools on the file at path, which exists.
func newStore(path string) (*Store, error) {
	// As a file: URI the path may hold '#', '%' or spaces: SQLite decodes
	// the escapes.
	uri := "file:" + (&url.URL{Path: path}).EscapedPath()
	// busy_timeout comes first so that the journal_mode switch of a fresh
	// file waits for other processes instead of failing.
	common := url.Values{"_pragma": {
		fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS),
		"foreign_keys(1)",
	}}
	w := cloneValues(common)
	w["_pragma"] = append(w["_pragma"], "journal_mode(WAL)", "synchronous(FULL)")
	w.Set("_txlock", "immediate")
	writer, err := openDB(uri + "?" + w.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open writer: %w", err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)

	// query_only makes a write through the reader pool an error, so a read
	// can never take the write lock.
	r := cloneValues(common)
	r["_pragma"] = append(r["_pragma"], "query_only(1)")
	reader, err := openDB(uri + "?" + r.Encode())
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open reader: %w", err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	// Nothing connects yet: New changes nothing in the file. The writer's
	// first connection switches it to WAL, readers or not (they wait for
	// it within busy_timeout).
	return &Store{writer: writer, reader: reader, lib: newLibReaders(uri, n)}, nil
}

// openDB is sql.Open("sqlite", dsn) with connections that keep their
// prepared statements (see cachingConnector).
func openDB(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(wrapConnector(cachingConnector{c})), nil
}

// wrapConnector lets a test see every statement (statements_internal_test).
var wrapConnector = func(c driver.Connector) driver.Connector { return c }

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// InTx runs fn in a read-write transaction, retrying all of it while the
// database is busy. fn must not call InTx: the writer has one connection.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return retry(ctx, func() error {
		return runTx(ctx, s.writer, nil, &s.writeBusy, func(t *sql.Tx) error { return fn(ctx, &tx{tx: t}) })
	})
}

// ReadTx runs fn in a read-only transaction over one snapshot.
func (s *Store) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return retry(ctx, func() error {
		return runTx(ctx, s.reader, &sql.TxOptions{ReadOnly: true}, nil, func(t *sql.Tx) error { return fn(ctx, &tx{tx: t}) })
	})
}

// ReadOne runs fn, which makes one read statement, on the reader pool
// without BEGIN and COMMIT around it (engine.OneReader): one statement
// reads one snapshot by itself. Reader connections are query_only, so a
// write fails; a further statement would read a snapshot of its own.
func (s *Store) ReadOne(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return retry(ctx, func() error { return fn(ctx, &tx{tx: s.reader, lib: s.lib}) })
}

var _ engine.PoolStatser = (*Store)(nil)

// PoolStats reports the writer's and the reader pool's statistics
// (engine.PoolStatser).
func (s *Store) PoolStats() []engine.PoolStats {
	writer := poolStats("writer", s.writer.Stats())
	writer.WriteBusy = time.Duration(s.writeBusy.Load())
	return []engine.PoolStats{writer, poolStats("reader", s.reader.Stats()), s.lib.stats("reader_one")}
}

func poolStats(name string, st sql.DBStats) engine.PoolStats {
	return engine.PoolStats{Pool: name, MaxOpen: st.MaxOpenConnections, Open: st.OpenConnections, InUse: st.InUse, Idle: st.Idle,
		Waits: st.WaitCount, WaitDuration: st.WaitDuration}
}

// Close closes both pools.
func (s *Store) Close() error {
	s.lib.close()
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// runTx runs fn in a transaction of db: committed if fn returns nil, rolled
// back if it returns an error or panics. fn's error is returned unchanged.
// busy, if not nil, is added the nanoseconds from BEGIN to the end.
func runTx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, busy *atomic.Int64, fn func(*sql.Tx) error) error {
	t, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if busy != nil {
		began := time.Now()
		defer func() { busy.Add(int64(time.Since(began))) }()
	}
	// A transaction left open would hold the writer's only connection.
	defer func() {
		if p := recover(); p != nil {
			_ = t.Rollback()
			panic(p)
		}
	}()
	if err := fn(t); err != nil {
		_ = t.Rollback()
		return err
	}
	return t.Commit()
}

// retry calls attempt until it returns something other than a busy error,
// backing off between attempts, so that SQLITE_BUSY never reaches a caller:
// after maxAttempts it is engine.ErrUnavailable (another process held the
// database's lock all that time; the caller may try again later).
func retry(ctx context.Context, attempt func() error) error {
	return retryPolicy.Do(ctx, attempt)
}

var retryPolicy = txretry.Policy{
	MaxAttempts: maxAttempts, FirstBackoff: firstBackoff, MaxBackoff: maxBackoff,
	Retryable: isBusy,
	GiveUp: func(n int, err error) error {
		return fmt.Errorf("sqlite: database still busy after %d attempts: %w: %v", n, engine.ErrUnavailable, err)
	},
}

// isBusy reports whether err is SQLite's "try again later": SQLITE_BUSY or
// SQLITE_LOCKED, including their extended codes.
func isBusy(err error) bool {
	var e interface{ Code() int } // *sqlite.Error or *libError
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// interpretError turns driver errors into the errors engine.Tx promises.
// ErrNotFound is returned bare, so errors.Is and == both match it.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return engine.ErrNotFound
	}
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", engine.ErrDuplicate, err)
		}
	}
	return err
}
