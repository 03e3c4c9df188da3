// Package postgres is payd's PostgreSQL store: an engine.Store over a
// pgxpool, for deployments where several payd processes share one database.
//
// Where storage/sqlite serializes every write transaction behind the
// database's one write lock, here transactions run concurrently at READ
// COMMITTED and take row locks where the engine asks for them: the Lock
// methods (LockDeposit, LockOrganization, LockWallet, LockAttempt,
// LockWithdrawal, LockWebhookEndpoint, LockDelivery) lock one row,
// ListWallets with ForUpdate the wallets it lists, and the claims
// (ClaimDueAttempts, ClaimDuePayouts, ClaimDueDeliveries,
// ListExpirableDeposits) lock the rows they take with SKIP LOCKED, so two
// processes never take the same work.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/txretry"
)

// Store is an engine.Store on a PostgreSQL database.
type Store struct {
	pool     *pgxpool.Pool
	ownsPool bool // Open made it: Close closes it
	health   health
	deposits depositReads // ReadOne's reads of a deposit by ID
	// writeBusy is the nanoseconds write transactions held a connection
	// (PoolStats).
	writeBusy atomic.Int64
}

var (
	_ engine.Store     = (*Store)(nil)
	_ engine.OneReader = (*Store)(nil)
)

// Retry bounds of a transaction that keeps failing with a serialization
// failure or a deadlock.
const (
	maxAttempts  = 10
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = 500 * time.Millisecond
)

// SQLSTATEs the store interprets.
const (
	codeUniqueViolation = "23505"
	// an asserted row count's failure (see asserted)
	codeInvalidTextRepresentation = "22P02"
	codeSerializationFailure      = "40001"
	codeDeadlockDetected          = "40P01"
)

// DefaultMaxConns is the size of the connection pool unless url sets
// pool_max_conns. pgxpool's own default, max(4, CPUs), left a 2-CPU server's
// HTTP requests and verification workers queueing for connections; 16 is
// what paydbench measured best there, and few enough that several
// instances fit in PostgreSQL's default max_connections (100).
const DefaultMaxConns = 16

// defaultConnectTimeout bounds one connection attempt to one host unless
// url sets connect_timeout.
const defaultConnectTimeout = 5 * time.Second

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as pgx accepts; pool_* parameters configure the pool,
// pool_max_conns its size, DefaultMaxConns by default) and applies the
// store's own migrations and those of lines (see Migrate): the convenience
// of a program that owns its database. Several processes may Open one
// database at once: migrations are applied under an advisory lock. Close
// closes the pool it made.
func Open(ctx context.Context, url string, lines ...engine.MigrationLine) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse url: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	// A host that does not answer (a primary cut off, not just stopped)
	// would otherwise hold a connection attempt for the kernel's TCP
	// timeout, minutes, before the next host of a multi-host URL is tried.
	if !strings.Contains(url, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	ConfigurePool(cfg)
	s := &Store{ownsPool: true}
	// Each new connection after the first is a reconnect, for the
	// outage metrics.
	configured := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if err := configured(ctx, conn); err != nil {
			return err
		}
		s.health.connected()
		return nil
	}
	configHook(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s.pool = pool
	if _, err := s.Migrate(ctx, lines...); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// New builds a store on the host's pool, changing nothing in the
// database: the host decides when its schema changes (Migrate). The store
// runs every transaction on pool and Close leaves it open. ConfigurePool,
// on the config the host opens pool from, gives its connections what Open
// gives its own: durable commits, no JIT, and NUMERIC decoded straight
// into decimal.Decimal (without it, decimals go through their exact text).
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool}
}

// ConfigurePool sets what the store needs of a pool's connections on cfg,
// keeping the host's own settings: NUMERIC read and written as
// decimal.Decimal exactly (after the host's AfterConnect, if any), commits
// durable before they return (synchronous_commit on, overriding a weaker
// server default), JIT off unless cfg sets it, and application_name
// "payd" unless cfg names one.
func ConfigurePool(cfg *pgxpool.Config) {
	// Durability: a committed transaction is on disk (and, where the
	// operator configured synchronous standbys, there too) before COMMIT
	// returns. Sent in the startup packet, it overrides a weaker server,
	// database or role default, and an "options" parameter in url.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	// JIT compiles a statement whose plan costs more than a threshold:
	// hundreds of milliseconds spent on statements that run in one
	// (TestJITOff). None of payd's gains from it.
	if _, ok := cfg.ConnConfig.RuntimeParams["jit"]; !ok {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "payd"
	}
	// NUMERIC <-> decimal.Decimal, exactly.
	host := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if host != nil {
			if err := host(ctx, conn); err != nil {
				return err
			}
		}
		pgxdecimal.Register(conn.TypeMap())
		conn.TypeMap().RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: decimalCodec{}})
		return nil
	}
}

var _ engine.PoolStatser = (*Store)(nil)

// PoolStats reports the connection pool's statistics (engine.PoolStatser).
// Waits are the acquires that found no idle connection and waited for one
// to be released or opened.
func (s *Store) PoolStats() []engine.PoolStats {
	st := s.pool.Stat()
	return []engine.PoolStats{{Pool: "main", MaxOpen: int(st.MaxConns()), Open: int(st.TotalConns()),
		InUse: int(st.AcquiredConns()), Idle: int(st.IdleConns()),
		Waits: st.EmptyAcquireCount(), WaitDuration: st.EmptyAcquireWaitTime(),
		WriteBusy: time.Duration(s.writeBusy.Load())}}
}

// configHook lets a test see every statement (statements_internal_test).
var configHook = func(*pgxpool.Config) {}

// Close closes the pool Open made, waiting for the connections in use; a
// store from New leaves the host's pool open.
func (s *Store) Close() error {
	if s.ownsPool {
		s.pool.Close()
	}
	return nil
}

var (
	readWrite = pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite}
	// REPEATABLE READ: every statement of fn reads the snapshot its first
	// one took. A read-only transaction never fails to serialize at this
	// level, and it neither takes nor waits for row locks.
	readOnly = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
)

// InTx runs fn in a READ COMMITTED read-write transaction, running all of it
// again (after a jittered backoff) when the database reports a
// serialization failure or a deadlock. fn's other errors are returned
// unchanged.
//
// An error that means no writable primary was reachable (the server is
// down, restarting or a standby, or the connection broke) is
// engine.ErrUnavailable to errors.Is; when it came from COMMIT, the
// transaction may have committed.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	began := time.Now().UnixNano()
	return s.health.observe(ctx, retry(ctx, func() error {
		return s.runLazyTx(ctx, func(t *lazyTx) error { return fn(ctx, &tx{tx: t}) })
	}), true, began)
}

// ReadTx runs fn in a read-only transaction over one snapshot. In it the
// Lock methods and ListExpirableDeposits read without locking, as there is
// nothing a read-only transaction could do with the lock.
func (s *Store) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return s.health.observe(ctx, retry(ctx, func() error {
		return s.runTx(ctx, readOnly, func(t pgx.Tx) error { return fn(ctx, &tx{tx: t, readOnly: true}) })
	}), false, 0)
}

// ReadOne runs fn, which makes one read statement, on the pool without a
// transaction around it: one statement reads one snapshot by itself, so
// BEGIN and COMMIT, two of ReadTx's three round trips, would bring nothing.
// A second statement, or one that is not a SELECT, fails with
// errNotOneRead. A read of a deposit by ID may go in one statement with
// others asked at the same time (depositReads).
func (s *Store) ReadOne(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return s.health.observe(ctx, fn(ctx, &tx{tx: &oneRead{store: s}, readOnly: true}), false, 0)
}

// runTx runs fn in a transaction: committed if fn returns nil, rolled back if
// it returns an error or panics (the panic goes on). fn's error is returned
// unchanged.
func (s *Store) runTx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	t, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			rollback(ctx, t)
			panic(p)
		}
	}()
	if err := fn(t); err != nil {
		rollback(ctx, t)
		return err
	}
	return t.Commit(ctx)
}

// runLazyTx is runTx for a read-write transaction whose BEGIN goes with
// its first statement (lazyTx).
func (s *Store) runLazyTx(ctx context.Context, fn func(*lazyTx) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	held := time.Now()
	defer func() { s.writeBusy.Add(int64(time.Since(held))) }()
	t := &lazyTx{conn: conn}
	defer func() {
		if p := recover(); p != nil {
			t.rollback(ctx)
			panic(p)
		}
	}()
	if err := fn(t); err != nil {
		t.rollback(ctx)
		return err
	}
	if err := t.commit(ctx); err != nil {
		t.rollback(ctx)
		return err
	}
	return nil
}

// rollback ends t even when ctx is done, so that the connection goes back
// to the pool clean instead of being closed. A rollback that fails leaves
// nothing to undo: pgx then closes the connection, which ends the
// transaction on the server.
func rollback(ctx context.Context, t pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = t.Rollback(ctx)
}

// retry calls attempt until it returns something other than a serialization
// failure or a deadlock, backing off between attempts; after maxAttempts
// the last error is returned, wrapped.
func retry(ctx context.Context, attempt func() error) error {
	return retryPolicy.Do(ctx, attempt)
}

var retryPolicy = txretry.Policy{
	MaxAttempts: maxAttempts, FirstBackoff: firstBackoff, MaxBackoff: maxBackoff,
	Retryable: isRetryable,
	GiveUp: func(n int, err error) error {
		return fmt.Errorf("postgres: transaction still conflicting after %d attempts: %w", n, err)
	},
}

// isRetryable reports whether err is a conflict with another transaction
// that running the transaction again resolves.
func isRetryable(err error) bool {
	var e *pgconn.PgError
	if !errors.As(err, &e) {
		return false
	}
	return e.Code == codeSerializationFailure || e.Code == codeDeadlockDetected
}

// interpretError turns driver errors into the errors engine.Tx promises.
// ErrNotFound is returned bare, so errors.Is and == both match it.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.ErrNotFound
	}
	var e *pgconn.PgError
	if errors.As(err, &e) && e.Code == codeUniqueViolation {
		return fmt.Errorf("%w: %s: %v", engine.ErrDuplicate, e.ConstraintName, err)
	}
	return err
}

var _ engine.ConcurrentWriter = (*Store)(nil)

// ConcurrentWrites is how many batches of one kind the engine writes at
// once (engine.ConcurrentWriter): a quarter of the pool, the engine having
// four kinds of batch besides its reads, and at most 8.
func (s *Store) ConcurrentWrites() int {
	return min(max(int(s.pool.Config().MaxConns)/4, 1), 8)
}
