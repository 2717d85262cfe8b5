// Package postgres implements core.Store on PostgreSQL with sqlx and lib/pq. Every SQL
// statement of the hub lives in this package, named after what it does.
package postgres

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// Store is core.Store on a connection pool.
type Store struct {
	db *sqlx.DB
	queries
}

var _ core.Store = (*Store)(nil)

// Options tune the pool.
type Options struct {
	MaxOpenConns int
	// LockTimeout bounds how long a transaction waits for a row lock before the use
	// case answers "contended" instead of queueing requests behind a slow change.
	LockTimeout time.Duration
}

// Open connects to url and checks the connection.
//
// Two settings of every connection save round trips: binary_parameters sends a
// statement with its arguments in one exchange (lib/pq otherwise prepares it first and
// waits, then executes: two), and lock_timeout is a session setting rather than a
// SET LOCAL at the start of each transaction. The lock timeout then also bounds
// statements outside transactions and migrations, which is what it is for: nothing
// queues requests behind a slow change (a migration that gives up is rerun).
func Open(ctx context.Context, url string, opt Options) (*Store, error) {
	return open(ctx, url, opt, nil)
}

// open is Open with the connector wrapped by wrap when set (a test's notice handler).
func open(ctx context.Context, url string, opt Options, wrap func(driver.Connector) driver.Connector) (*Store, error) {
	if opt.MaxOpenConns == 0 {
		opt.MaxOpenConns = 20
	}
	if opt.LockTimeout == 0 {
		opt.LockTimeout = 5 * time.Second
	}
	cfg, err := pq.NewConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	cfg.BinaryParameters = true
	if cfg.Runtime == nil {
		cfg.Runtime = map[string]string{}
	}
	if _, set := cfg.Runtime["lock_timeout"]; !set { // a URL's own setting wins
		cfg.Runtime["lock_timeout"] = strconv.FormatInt(opt.LockTimeout.Milliseconds(), 10)
	}
	connector, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	var c driver.Connector = connector
	if wrap != nil {
		c = wrap(c)
	}
	db := sqlx.NewDb(sql.OpenDB(c), "postgres")
	db.SetMaxOpenConns(opt.MaxOpenConns)
	db.SetMaxIdleConns(opt.MaxOpenConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", mapErr(err))
	}
	stmts := newPreparedSet(db)
	return &Store{db: db, queries: queries{ext: db, stmts: stmts}}, nil
}

// DB exposes the pool for migrations and the operator tools.
func (s *Store) DB() *sqlx.DB { return s.db }

// Close closes the pool.
func (s *Store) Close() error {
	if s.stmts != nil {
		s.stmts.close()
	}
	return s.db.Close()
}

// Ping checks the database (readiness).
func (s *Store) Ping(ctx context.Context) error { return mapErr(s.db.PingContext(ctx)) }

// InTx runs fn in one READ COMMITTED transaction. Deadlocks and serialization failures
// are retried (the transaction did nothing); every other error rolls back and returns.
func (s *Store) InTx(ctx context.Context, fn func(q core.Queries) error) error {
	var err error
	for attempt := range txAttempts {
		if err = s.inTxOnce(ctx, fn); !retryable(err) {
			return err
		}
		if attempt+1 < txAttempts {
			if err := txBackoff.Wait(ctx, attempt+1, crand.Reader); err != nil {
				return err
			}
		}
	}
	// Contended still: the caller may retry (a 503 for the API, a redelivery for chat).
	return fmt.Errorf("%w: %w", core.ErrContended, err)
}

// txAttempts is how often InTx runs a transaction that fails to serialise.
const txAttempts = 4

// txBackoff spreads the retries of transactions that collided over up to 5, 10 and
// 20 ms, at random (full jitter): ones that start again together collide again.
var txBackoff = core.Backoff{First: 5 * time.Millisecond, Max: 20 * time.Millisecond, Jitter: 1}

func (s *Store) inTxOnce(ctx context.Context, fn func(q core.Queries) error) (err error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", mapErr(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	notes := &notifications{}
	if err = fn(queries{ext: tx, notes: notes, stmts: s.stmts}); err != nil {
		return err
	}
	if err = notes.send(ctx, tx); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", mapErr(err))
	}
	return nil
}

// queries runs statements on the pool or on a transaction.
type queries struct {
	ext sqlx.ExtContext
	// stmts are the pool's prepared statements (prepared.go); nil runs every statement
	// as it is.
	stmts *preparedSet
	// notes gathers a transaction's notifications (nil on the pool): sent together
	// when it commits (Notify).
	notes *notifications
}

var _ core.Queries = queries{}

func (q queries) get(ctx context.Context, dest any, query string, args ...any) error {
	return mapErr(sqlx.GetContext(ctx, q.ext, dest, query, args...))
}

func (q queries) selectAll(ctx context.Context, dest any, query string, args ...any) error {
	return mapErr(sqlx.SelectContext(ctx, q.ext, dest, query, args...))
}

func (q queries) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.ext.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n, mapErr(err)
}

// mapErr translates driver errors into core's sentinel errors, keeping the original.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.ErrNoRows
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch {
		case pqErr.Code == "23505":
			return fmt.Errorf("%w: %s", core.ErrConflict, pqErr.Constraint)
		case pqErr.Code == "55P03":
			return fmt.Errorf("%w: %w", core.ErrContended, err)
		case pqErr.Code.Class() == "08", pqErr.Code == "57P01", pqErr.Code == "57P02", pqErr.Code == "57P03", pqErr.Code == "53300":
			return fmt.Errorf("%w: %w", core.ErrUnavailable, err)
		}
		return err
	}
	var netErr net.Error
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.As(err, &netErr) ||
		strings.Contains(err.Error(), "connection refused") {
		return fmt.Errorf("%w: %w", core.ErrUnavailable, err)
	}
	return err
}

func retryable(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && (pqErr.Code == "40001" || pqErr.Code == "40P01")
}

// nullTime and timePtr convert nullable timestamps.
func nullTime(t *time.Time) sql.NullTime {
	if t == nil {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: *t, Valid: true}
}

func timePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time
	return &v
}

// wrapErr annotates a returned error with the operation, keeping errors.Is and
// errors.As working (the deferred wrap of pkgsite's derrors.Wrap).
func wrapErr(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}
