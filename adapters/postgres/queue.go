package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// leasedTable is one queue of leased work. Every queue of the hub is one (workspaces,
// webhook_deliveries, chat_inbox, chat_deliveries, chat_notices): each keeps its own
// table, because its rows are domain records with their own columns, indexes and
// per-thread ordering, but the statements that claim, renew, release and settle them
// are all built here, so they share one shape:
//
//   - claim: the due rows whose lease is free or expired, oldest due first, locked with
//     FOR UPDATE SKIP LOCKED so replicas claim side by side, each given a lease token
//     made of the claim's token and the row's key, and a lease that runs out by the
//     database's clock alone (hubs' clocks may disagree);
//   - renew, release and settle: fenced by that token, so a worker whose lease ran out
//     and was taken by another claim changes nothing.
//
// A new kind of work is a table with lease_token and lease_expires_at columns, a
// partial index for its due predicate, and a leasedTable literal.
type leasedTable struct {
	table, alias string
	key          []string // primary key columns
	// due selects the rows with work (on alias); it may use the claim's extra
	// arguments, numbered from $4 ($1 token, $2 lease seconds, $3 limit).
	due   string
	order string // oldest due first
	// with are common table expressions the claim's due rows are chosen with (without
	// WITH; the claim's own CTE, due, follows them), and dueFrom the ones of them the
	// due CTE joins (", name alias"): a fair claim ranks its rows there first.
	with, dueFrom string
	// from and join add tables to the claim's RETURNING (the work's context), so that
	// one statement hands over everything a worker needs: no query per row.
	from, join string
	// set are more assignments of the claim's UPDATE (on alias, with the claim's
	// arguments): what the claim records on the rows it takes besides the lease.
	set       string
	returning string
}

// claimSQL is the claim statement.
func (t leasedTable) claimSQL() string {
	var keys, on, token []string
	for _, k := range t.key {
		keys = append(keys, t.alias+"."+k)
		on = append(on, fmt.Sprintf("%s.%s = due.%s", t.alias, k, k))
		token = append(token, t.alias+"."+k)
	}
	from, where := "due", strings.Join(on, " AND ")
	if t.from != "" {
		from += ", " + t.from
		where += " AND " + t.join
	}
	with := "WITH "
	if t.with != "" {
		with += t.with + ",\n"
	}
	set := ""
	if t.set != "" {
		set = ", " + t.set
	}
	return fmt.Sprintf(`%[10]sdue AS (
		SELECT %[3]s FROM %[1]s %[2]s%[11]s
		WHERE %[4]s AND (%[2]s.lease_expires_at IS NULL OR %[2]s.lease_expires_at < now())
		ORDER BY %[5]s
		LIMIT $3
		FOR UPDATE OF %[2]s SKIP LOCKED)
	UPDATE %[1]s %[2]s SET lease_token = $1::text || '/' || %[6]s, lease_expires_at = now() + make_interval(secs => $2)%[12]s
	FROM %[7]s WHERE %[8]s
	RETURNING %[9]s`, t.table, t.alias, strings.Join(keys, ", "), t.due, t.order,
		strings.Join(token, " || '/' || "), from, where, t.returning, with, t.dueFrom, set)
}

// claim runs the claim statement into dest (a slice of rows matching returning).
func (t leasedTable) claim(ctx context.Context, q queries, dest any, token string, leaseFor time.Duration, limit int, args ...any) error {
	return q.selectAll(ctx, dest, t.claimSQL(), t.claimArgs(token, leaseFor, limit, args...)...)
}

// claimArgs are the claim statement's arguments: $1 token, $2 lease seconds, $3 limit,
// then the due predicate's own.
func (t leasedTable) claimArgs(token string, leaseFor time.Duration, limit int, args ...any) []any {
	return append([]any{token, leaseFor.Seconds(), limit}, args...)
}

// fenced is the WHERE of the statements on one leased row: its key ($1..) and the
// lease token (the next parameter).
func (t leasedTable) fenced() string {
	var w []string
	for i, k := range t.key {
		w = append(w, fmt.Sprintf("%s = $%d", k, i+1))
	}
	return strings.Join(append(w, fmt.Sprintf("lease_token = $%d", len(t.key)+1)), " AND ")
}

// set is one column a settle writes; keep leaves the column as it is when val is NULL.
type set struct {
	col  string
	val  any
	keep bool
}

// settle frees the lease and writes the columns, only while the lease is held; false
// when it was lost (or the row is gone).
func (t leasedTable) settle(ctx context.Context, q queries, key []any, token string, cols ...set) (bool, error) {
	args := append(append([]any{}, key...), token)
	var assign []string
	for _, c := range cols {
		args = append(args, c.val)
		p := fmt.Sprintf("$%d", len(args))
		if c.keep {
			p = fmt.Sprintf("COALESCE(%s, %s)", p, c.col)
		}
		assign = append(assign, c.col+" = "+p)
	}
	assign = append(assign, "lease_token = NULL", "lease_expires_at = NULL")
	n, err := q.exec(ctx, fmt.Sprintf(`UPDATE %s SET %s WHERE %s`, t.table, strings.Join(assign, ", "), t.fenced()), args...)
	return n == 1, err
}

// release frees the lease without recording anything: the row is due again at once.
func (t leasedTable) release(ctx context.Context, q queries, key []any, token string) error {
	_, err := t.settle(ctx, q, key, token)
	return err
}

// renew extends a held lease to leaseFor from the database's now, scanning returning
// (a column of the row) into dest; core.ErrNoRows when the lease was lost.
func (t leasedTable) renew(ctx context.Context, q queries, dest any, returning string, key []any, token string, leaseFor time.Duration) error {
	args := append(append([]any{}, key...), token, leaseFor.Seconds())
	return q.get(ctx, dest, fmt.Sprintf(`UPDATE %s SET lease_expires_at = now() + make_interval(secs => $%d) WHERE %s RETURNING %s`,
		t.table, len(args), t.fenced(), returning), args...)
}
