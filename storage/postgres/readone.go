package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payd-engine/payd/engine"
)

// querier is what a tx runs its statements on: a pgx.Tx, or the pool for
// the one statement of ReadOne.
type querier interface {
	execer
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// errNotOneRead is what ReadOne answers to a second statement, or to one
// that is not a SELECT: a programming error, which the store suite checks.
var errNotOneRead = errors.New("postgres: ReadOne runs one SELECT; use ReadTx or InTx")

// oneRead runs the statement of ReadOne on the pool, outside any
// transaction, and refuses any other.
type oneRead struct {
	store *Store
	used  bool
}

func (r *oneRead) admit(sql string) bool {
	if r.used {
		return false
	}
	r.used = true
	sql = strings.TrimLeft(sql, " \t\r\n")
	return len(sql) > 6 && strings.EqualFold(sql[:6], "SELECT") && strings.ContainsRune(" \t\r\n", rune(sql[6]))
}

func (r *oneRead) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	r.used = true
	return pgconn.CommandTag{}, errNotOneRead
}

func (r *oneRead) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if !r.admit(sql) {
		return nil, errNotOneRead
	}
	return r.store.pool.Query(ctx, sql, args...)
}

func (r *oneRead) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if !r.admit(sql) {
		return errRow{errNotOneRead}
	}
	return r.store.pool.QueryRow(ctx, sql, args...)
}

// errRow is a pgx.Row that fails.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

var _ engine.CreateReader = (*Store)(nil)

// ReadCreate sends a create's two reads, the deposit of merchantID and the
// organization, in one round trip on the pool, outside any transaction,
// as two ReadOne reads would run them.
func (s *Store) ReadCreate(ctx context.Context, organizationID, merchantID string) (*engine.Organization, *engine.Deposit, error) {
	var b pgx.Batch
	b.Queue(getDepositByMerchantIDQuery, organizationID, merchantID)
	b.Queue(getOrganizationQuery, organizationID)
	br := s.pool.SendBatch(ctx, &b)
	d, err := scanDeposit(br.QueryRow())
	if errors.Is(err, engine.ErrNotFound) {
		d, err = nil, nil
	}
	var o *engine.Organization
	if err == nil {
		o, err = scanOrganization(br.QueryRow())
	}
	if cerr := br.Close(); err == nil {
		err = interpretError(cerr)
	}
	if err != nil {
		return nil, nil, s.health.observe(ctx, err, false, 0)
	}
	return o, d, nil
}
