package core

import (
	"context"
	"fmt"
)

// One hub serves many accounts, and none may take it all: an account has at most so
// many live workspaces and so many turns running at once, and a workspace at most so
// many open messages. The hub's
// defaults (settings) are generous enough that a normal team never meets them; an
// operator raises or lowers them per account (wshub admin account update). Going over
// answers 429 quota_exceeded, and nothing of the refused request is stored; a turn
// over the running quota is not refused but waits in its queue for a slot the
// account may take (the claim's fair order, fair_claim.go).

// Default quotas, when the hub sets none.
const (
	DefaultMaxWorkspaces   = 1000
	DefaultMaxOpenMessages = 200
	DefaultMaxRunningTurns = 50
	DefaultMaxKeys         = 50
	DefaultMaxSchedules    = 50
)

// Quotas are the hub's default limits per account (0: the package defaults).
type Quotas struct {
	Workspaces   int
	OpenMessages int
	RunningTurns int
	Keys         int
	// Schedules bounds an account's schedules: each tick of each one starts work, so
	// their number bounds how much of the hub an account's timetable can take.
	Schedules int
}

// QuotaQueries are the store statements the quotas count with.
type QuotaQueries interface {
	// CountLiveWorkspaces counts the account's workspaces that hold a machine or may
	// get one again: every state but archiving, archived, deleting, deleted and failed.
	CountLiveWorkspaces(ctx context.Context, accountID string) (int, error)
	// CountOpenMessages counts the workspace's user messages not yet answered
	// (pending or delivered).
	CountOpenMessages(ctx context.Context, workspaceID string) (int, error)
}

func (q Quotas) workspaces(a *Account) int {
	return quota(a.MaxWorkspaces, q.Workspaces, DefaultMaxWorkspaces)
}

func (q Quotas) openMessages(a *Account) int {
	return quota(a.MaxOpenMessages, q.OpenMessages, DefaultMaxOpenMessages)
}

func (q Quotas) keys(a *Account) int {
	return quota(a.MaxKeys, q.Keys, DefaultMaxKeys)
}

// schedules is the hub's limit: accounts have no schedule quota of their own.
func (q Quotas) schedules() int {
	return quota(nil, q.Schedules, DefaultMaxSchedules)
}

// runningTurns is the hub's default; an account's own is applied by the claim, in the
// store, where the running turns are counted.
func (q Quotas) runningTurns() int {
	return quota(nil, q.RunningTurns, DefaultMaxRunningTurns)
}

// quota is the account's own limit, else the hub's, else the package default.
func quota(own *int, hub, def int) int {
	switch {
	case own != nil:
		return *own
	case hub > 0:
		return hub
	}
	return def
}

// quotaExceeded names the limit, where the account stands, and how to get more.
func quotaExceeded(what string, limit int, a *Account, flag string) error {
	return Errorf(CodeQuotaExceeded, "%s: this account's limit is %d. Finish or archive some, or ask the hub's operator to raise it (wshub admin account update --account %s %s N)",
		what, limit, a.ID, flag)
}

// checkWorkspaceQuota runs in the transaction that creates a workspace, with the
// account row locked, so that concurrent creates cannot both take the last place.
func (q Quotas) checkWorkspaceQuota(ctx context.Context, tx Queries, a *Account) error {
	n, err := lockedCount(ctx, tx, a, tx.CountLiveWorkspaces)
	if err != nil {
		return err
	}
	if limit := q.workspaces(a); n >= limit {
		return quotaExceeded(fmt.Sprintf("the account has %d live workspaces", n), limit, a, "--max-workspaces")
	}
	return nil
}

// checkKeyQuota runs in the transaction that makes a key, with the account row
// locked: each key has a rate limit and streams of its own, so an account that could
// make any number of keys could take any share of a replica.
func (q Quotas) checkKeyQuota(ctx context.Context, tx AccountQueries, a *Account) error {
	n, err := lockedCount(ctx, tx, a, tx.CountLiveAPIKeys)
	if err != nil {
		return err
	}
	if limit := q.keys(a); n >= limit {
		return Errorf(CodeQuotaExceeded, "the account has %d API keys: this account's limit is %d. Revoke one it no longer uses, or ask the hub's operator to raise it (wshub admin account update --account %s --max-keys N)",
			n, limit, a.ID)
	}
	return nil
}

// checkScheduleQuota runs in the transaction that makes a schedule, with the account
// row locked, so that concurrent creates cannot both take the last place.
func (q Quotas) checkScheduleQuota(ctx context.Context, tx Queries, a *Account) error {
	n, err := lockedCount(ctx, tx, a, tx.CountSchedules)
	if err != nil {
		return err
	}
	if limit := q.schedules(); n >= limit {
		return Errorf(CodeQuotaExceeded, "the account has %d schedules: the hub's limit is %d. Delete one it no longer needs, or ask the hub's operator to raise WSHUB_MAX_SCHEDULES",
			n, limit)
	}
	return nil
}

// lockedCount locks the account's row for the rest of the transaction, then counts
// what a quota bounds: a create that counts after the lock sees every earlier one.
func lockedCount(ctx context.Context, tx AccountQueries, a *Account, count func(context.Context, string) (int, error)) (int, error) {
	if err := tx.LockAccount(ctx, a.ID); err != nil {
		return 0, err
	}
	return count(ctx, a.ID)
}

// messageQuotaRefusal says why a message was refused at the open-message quota (the
// insert holds the quota; this counts only to say so), in the same transaction.
func (q Quotas) messageQuotaRefusal(ctx context.Context, tx Queries, a *Account, workspaceID string) error {
	n, err := tx.CountOpenMessages(ctx, workspaceID)
	if err != nil {
		return err
	}
	return quotaExceeded(fmt.Sprintf("the workspace has %d messages waiting for the agent", n), q.openMessages(a), a, "--max-open-messages")
}
