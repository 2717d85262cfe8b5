package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

// The hosts' heartbeats and the lost-host sweep (core/host.go). Every time here is the
// database's: a host is lost when its last heartbeat is older than lostAfter by the
// database's clock, whatever the hubs' clocks say.

// HostSeen is one upsert on the primary key.
func (q queries) HostSeen(ctx context.Context, host string, started bool) (err error) {
	defer wrapErr(&err, "host seen")
	_, err = q.exec(ctx, `INSERT INTO hosts (id, started_at, seen_at) VALUES ($1, now(), now())
		ON CONFLICT (id) DO UPDATE SET seen_at = now(), started_at = CASE WHEN $2 THEN now() ELSE hosts.started_at END`,
		host, started)
	return err
}

type lostHostRow struct {
	ID     string    `db:"id"`
	SeenAt time.Time `db:"seen_at"`
}

// LostHosts reads the whole of hosts, a row per host the hub ever had.
func (q queries) LostHosts(ctx context.Context, lostAfter time.Duration) (_ []core.LostHost, err error) {
	defer wrapErr(&err, "lost hosts")
	var rows []lostHostRow
	if err := q.selectAll(ctx, &rows, `SELECT id, seen_at FROM hosts WHERE seen_at < now() - make_interval(secs => $1)
		ORDER BY id`, lostAfter.Seconds()); err != nil {
		return nil, err
	}
	out := make([]core.LostHost, len(rows))
	for i, r := range rows {
		out[i] = core.LostHost{ID: r.ID, SeenAt: r.SeenAt}
	}
	return out, nil
}

// lostHostWorkspaces are the workspaces of one host ($1) in the states of stateIn,
// while it is not seen for $2 seconds, through workspaces_host: the host is named, so
// the plan is made for that host's share of the rows (a lost host's few, not a
// host's average). A heartbeat committed while the statement waits for the host's
// row is seen: READ COMMITTED judges the locked row again as it is then.
func lostHostWorkspaces(stateIn string) string {
	return `SELECT w.id, h.seen_at FROM hosts h JOIN workspaces w ON w.host = h.id
		WHERE h.id = $1 AND h.seen_at < now() - make_interval(secs => $2) AND w.state IN (` + stateIn + `)`
}

// lockLostHostWorkspaceSQL takes one workspace that fails (core/host.go) and leaves
// those other replicas hold to them.
var lockLostHostWorkspaceSQL = lostHostWorkspaces(`'provisioning', 'setup', 'resuming', 'ready'`) + `
		LIMIT 1 FOR UPDATE OF w SKIP LOCKED FOR SHARE OF h`

func (q queries) LockLostHostWorkspace(ctx context.Context, host string, lostAfter time.Duration) (_ *core.Workspace, _ core.LostHost, err error) {
	defer wrapErr(&err, "lock lost host workspace")
	var r lostHostRow
	if err := q.get(ctx, &r, lockLostHostWorkspaceSQL, host, lostAfter.Seconds()); err != nil {
		return nil, core.LostHost{}, err
	}
	ws, err := q.getWorkspace(ctx, `WHERE w.id = $1`, r.ID) // locked above, in this transaction
	if err != nil {
		return nil, core.LostHost{}, err
	}
	return ws, core.LostHost{ID: host, SeenAt: r.SeenAt}, nil
}

// releaseLostHostWorkspacesSQL: $1 the host, $2 lostAfter in seconds, $3 the limit.
// Through workspaces_host, or workspaces_transitional with it: both hold few rows.
var releaseLostHostWorkspacesSQL = `UPDATE workspaces SET host = NULL, lease_token = NULL, lease_expires_at = NULL
	WHERE id IN (SELECT l.id FROM (` + lostHostWorkspaces(`'queued', 'pausing', 'archiving', 'deleting'`) + `
	             LIMIT $3 FOR UPDATE OF w SKIP LOCKED FOR SHARE OF h) l)
	RETURNING id`

func (q queries) ReleaseLostHostWorkspaces(ctx context.Context, host string, lostAfter time.Duration, limit int) (_ []string, err error) {
	defer wrapErr(&err, "release lost host workspaces")
	var ids []string
	err = q.selectAll(ctx, &ids, releaseLostHostWorkspacesSQL, host, lostAfter.Seconds(), limit)
	return ids, err
}

// RevokeLease uses the primary key.
func (q queries) RevokeLease(ctx context.Context, id string) (err error) {
	defer wrapErr(&err, "revoke lease")
	_, err = q.exec(ctx, `UPDATE workspaces SET lease_token = NULL, lease_expires_at = NULL WHERE id = $1`, id)
	return err
}
