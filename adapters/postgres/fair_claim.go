package postgres

import (
	"context"
	"fmt"

	"github.com/wshub/wshub/core"
)

// The workspace claim is fair between accounts. Whoever queued first used to hold
// every slot: the claim took the oldest ready workspace, so one account's backlog made
// every other account wait behind all of it. Now each candidate is ranked by how many
// workspaces its account would hold were it claimed (those it holds now, on every
// replica, plus its rank among the account's candidates): a slot goes to the account
// furthest below its share of the hub's slots, and a second slot of one claim to the
// next account before the first account's second workspace. Lifecycle steps (create,
// resume, pause, archive) still come before turns: they are short, and a create must
// not wait behind the turns. Within an account, the oldest update goes first.
//
// A turn whose account has as many running as its quota (accounts.max_running_turns,
// else the hub's default) is not a candidate: it waits in its queue.

// workspaceHasWork is the due predicate on the workspace alias a: a transitional state
// (workspaces_transitional) or an open user message (messages_open), read from those
// two small sets so that a ready workspace with nothing to do, the common case, is
// never read. A paused workspace with a queued message is not due (the message
// resumes it through the state change, not the claim). A remote workspace
// (remote_start.go) whose machine was started is its runtime's to move on: it is
// claimed again only to stop its machine, or to start it again once the runtime is
// found gone (runtime_started_at cleared); a local workspace never has
// runtime_started_at set.
func workspaceHasWork(a string) string {
	return fmt.Sprintf(`%[1]s.id IN (
		        SELECT t.id FROM workspaces t
		        WHERE t.state IN ('queued', 'provisioning', 'setup', 'resuming', 'pausing', 'archiving', 'deleting')
		        UNION ALL
		        SELECT m.workspace_id FROM messages m WHERE m.role = 'user' AND m.status IN ('pending', 'delivered'))
		  AND %[2]s`, a, stateHasWork(a))
}

// stateHasWork is the part of workspaceHasWork on the row itself: the due CTE checks it
// again on each row it locks (a row another transaction changed since the candidates
// were read is judged as it is now).
func stateHasWork(a string) string {
	return fmt.Sprintf(`(%[1]s.state IN ('queued', 'pausing', 'archiving', 'deleting')
		       OR %[1]s.state IN ('provisioning', 'setup', 'resuming', 'ready') AND %[1]s.runtime_started_at IS NULL)`, a)
}

// servedBy is the claim's host predicate on the workspace alias a, host a parameter
// (the claiming hub's host, "" when it runs no local workspace): a local workspace is
// stepped only by the hubs of the host whose disk holds its checkout, and one no host
// holds yet (created on a hub that does not step workspaces, or before hosts were
// recorded) by any hub that runs local workspaces, which records its host in the claim
// (claimedHost). A remote provider's workspace has no host: any hub starts and stops
// its machine. It filters the few rows the due predicate reads: no index of its own.
func servedBy(a, host string) string {
	return fmt.Sprintf(`(%[1]s.provider_id <> '%[3]s' OR %[1]s.host = %[2]s OR %[1]s.host IS NULL AND %[2]s <> '')`,
		a, host, core.LocalProviderID)
}

// claimedHost is the claim's assignment that records the claiming hub's host on a
// local workspace that had none (servedBy admits such a row only when host is set).
func claimedHost(a, host string) string {
	return fmt.Sprintf(`host = COALESCE(%[1]s.host, CASE WHEN %[1]s.provider_id = '%[3]s' THEN NULLIF(%[2]s, '') END)`,
		a, host, core.LocalProviderID)
}

// fairCandidates are the CTEs held (what each account's workers hold now, through
// the partial index workspaces_leased, on every host: the share is of the whole hub)
// and cand (every workspace with work and no live lease that this host may step, with
// share: the workspaces its account would hold were it claimed; turns: likewise its
// running turns; max_turns: its account's quota, else maxTurns, a parameter; host, the
// parameter of servedBy).
func fairCandidates(maxTurns, host string) string {
	return fmt.Sprintf(`held AS (
		SELECT account_id, count(*) AS n, count(*) FILTER (WHERE state = 'ready') AS turns
		FROM workspaces WHERE lease_token IS NOT NULL AND lease_expires_at >= now()
		GROUP BY account_id),
	cand AS (
		SELECT d.id, d.account_id, d.state, d.updated_at,
		       coalesce(h.n, 0) + row_number() OVER acct AS share,
		       coalesce(h.turns, 0) + count(*) FILTER (WHERE d.state = 'ready') OVER acct AS turns,
		       coalesce(a.max_running_turns, %[1]s) AS max_turns
		FROM workspaces d JOIN accounts a ON a.id = d.account_id LEFT JOIN held h ON h.account_id = d.account_id
		WHERE %[2]s AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now()) AND %[3]s
		WINDOW acct AS (PARTITION BY d.account_id ORDER BY d.state = 'ready', d.updated_at, d.id ROWS UNBOUNDED PRECEDING))`,
		maxTurns, workspaceHasWork("d"), servedBy("d", host))
}

// fairOrder: lifecycle steps first, then the account furthest below its share, then
// the oldest update.
const fairOrder = "c.state = 'ready', c.share, c.updated_at, c.id"

// otherAccountWaitingSQL: $1 the account, $2 the hub's default quota of running
// turns, $3 the asking hub's host.
var otherAccountWaitingSQL = `WITH ` + fairCandidates("$2", "$3") + `
	SELECT EXISTS (SELECT 1 FROM cand c WHERE c.account_id <> $1 AND (c.state <> 'ready' OR c.turns <= c.max_turns))`

// OtherAccountWaiting asks the claim's own question for every account but one.
func (q queries) OtherAccountWaiting(ctx context.Context, accountID string, maxRunningTurns int, host string) (_ bool, err error) {
	defer wrapErr(&err, "other account waiting")
	var waiting bool
	err = q.get(ctx, &waiting, otherAccountWaitingSQL, accountID, maxRunningTurns, host)
	return waiting, err
}
