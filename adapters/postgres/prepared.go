package postgres

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// The statements every request runs (the key's account, a workspace, a page of
// messages, a send's insert) are prepared: PostgreSQL parses and plans each once per
// connection, and a request sends only its arguments (Bind, Execute), where an
// unprepared statement is parsed, analysed and planned on every run. database/sql
// prepares a statement on each pooled connection the first time it runs there, and
// in a transaction uses the connection's own (sql.Tx.StmtContext).
//
// The statement texts are the callers' constants (or, for the workspace page, a few
// combinations of fixed clauses); the set is bounded all the same, and a statement
// beyond it runs unprepared.

// maxPrepared bounds the statements kept prepared, per pool.
const maxPrepared = 64

// preparedSet holds the pool's prepared statements by text.
type preparedSet struct {
	db *sqlx.DB
	mu sync.Mutex
	// m holds each statement seen: nil while it is being prepared, or when it could not
	// be (it then runs as it is).
	m      map[string]*sql.Stmt
	closed bool
}

func newPreparedSet(db *sqlx.DB) *preparedSet {
	return &preparedSet{db: db, m: map[string]*sql.Stmt{}}
}

// stmt is query's prepared statement on the pool, or nil until it has one. The first
// sight of a statement prepares it in the background: preparing on the pool takes a
// connection of its own, which a request inside a transaction must not wait for (with
// every connection held by such requests, none would come).
func (p *preparedSet) stmt(query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, seen := p.m[query]
	if seen || p.closed || len(p.m) >= maxPrepared {
		return s
	}
	p.m[query] = nil
	go p.prepare(query)
	return nil
}

// prepare prepares query on the pool; a failure leaves it unprepared for good (it is
// not the statement's only way to run).
func (p *preparedSet) prepare(query string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.db.PrepareContext(ctx, query)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		return
	}
	if p.closed {
		_ = s.Close()
		return
	}
	p.m[query] = s
}

// close releases the statements on every connection.
func (p *preparedSet) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, s := range p.m {
		if s != nil {
			_ = s.Close()
		}
	}
	clear(p.m)
}

// query runs a statement of a hot path, prepared when it can be: on the pool, or on
// q's transaction's connection.
func (q queries) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := q.prepared(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return q.ext.QueryContext(ctx, query, args...)
}

// queryRow is query for a single row.
func (q queries) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
	if s := q.prepared(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return q.ext.QueryRowxContext(ctx, query, args...)
}

// prepared is query's statement for q: nil when q has no set (queries made by hand) or
// the statement cannot be prepared, and the caller then runs it as it is.
func (q queries) prepared(ctx context.Context, query string) *sql.Stmt {
	if q.stmts == nil {
		return nil
	}
	s := q.stmts.stmt(query)
	if s == nil {
		return nil
	}
	switch ext := q.ext.(type) {
	case *sqlx.Tx:
		return ext.StmtContext(ctx, s)
	case *sqlx.DB:
		return s
	}
	return nil
}
