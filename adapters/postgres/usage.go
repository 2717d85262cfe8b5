package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/wshub/wshub/core"
)

// The usage page's tables: one statement each, grouping the account's workspaces
// started since $2 and its turns ended since $2 by the table's key, then joining the
// two counts. A turn is its assistant message (the reply, written as the turn ends,
// with its outcome) and its user message (delivered_at: the agent took it); the user
// message is found by its key, for a turn's id is its message's (core.TurnIDFor), and
// the turn id checked as well.
//
// Indexes: the workspaces by workspaces_account_newest, each workspace's turns in the
// window by messages_turns_ended (00048), their user messages by the primary key.

// usageTable is how one table groups: a workspace's key and the name recorded with
// it, a turn's key (u its user message) and the name recorded with it, and the final
// name of a key k.key (joining what names it).
type usageTable struct {
	workspaceKey, workspaceName string
	turnKey, turnName           string
	name, join                  string
}

// Workspace started by (and turn sent by) a member: the member; else the author
// kind and id ("api:key_..."), named by the name recorded as they acted.
var usageByMember = usageTable{
	workspaceKey: `COALESCE(w.started_by_member_id, w.started_by_kind || ':' || w.started_by_id)`, workspaceName: `w.started_by_name`,
	turnKey: `COALESCE(u.author_member_id, u.author_kind || ':' || u.author_id)`, turnName: `u.author_name`,
	name: `COALESCE(NULLIF(m.name, ''), k.workspace_name, k.turn_name, '')`, join: `LEFT JOIN members m ON m.id = k.key`,
}

var usageByProject = usageTable{
	workspaceKey: `w.project_id`, workspaceName: `''`, turnKey: `w.project_id`, turnName: `''`,
	name: `COALESCE(p.display_name, '')`, join: `LEFT JOIN projects p ON p.id = k.key AND p.account_id = $1`,
}

// An agent is named by core's catalog.
var usageByAgent = usageTable{
	workspaceKey: `w.agent`, workspaceName: `''`, turnKey: `w.agent`, turnName: `''`, name: `''`,
}

func (t usageTable) query() string {
	return `WITH started AS (
		SELECT ` + t.workspaceKey + ` AS key, max(` + t.workspaceName + `) AS workspace_name, count(*) AS workspaces
		FROM workspaces w WHERE w.account_id = $1 AND w.created_at >= $2 GROUP BY 1
	), ran AS (
		SELECT ` + t.turnKey + ` AS key, max(` + t.turnName + `) AS turn_name, count(*) AS turns,
			count(*) FILTER (WHERE a.outcome = 'error') AS failures,
			COALESCE(sum(GREATEST(EXTRACT(EPOCH FROM a.created_at - u.delivered_at), 0)), 0)::float8 AS agent_seconds
		FROM workspaces w
		JOIN messages a ON a.workspace_id = w.id AND a.role = 'assistant' AND a.created_at >= $2
		JOIN messages u ON u.id = '` + core.PrefixMessage + `' || substr(a.turn_id, ` + strconv.Itoa(len(core.PrefixTurn)+1) + `)
			AND u.turn_id = a.turn_id
		WHERE w.account_id = $1 GROUP BY 1
	)
	SELECT k.key, ` + t.name + ` AS name, k.workspaces, k.turns, k.failures, k.agent_seconds
	FROM (SELECT key, s.workspace_name, r.turn_name, COALESCE(s.workspaces, 0) AS workspaces,
			COALESCE(r.turns, 0) AS turns, COALESCE(r.failures, 0) AS failures, COALESCE(r.agent_seconds, 0) AS agent_seconds
		FROM started s FULL JOIN ran r USING (key)) k ` + t.join + `
	ORDER BY k.turns DESC, k.agent_seconds DESC, k.workspaces DESC, 2, k.key`
}

// read runs the table's statement.
func (t usageTable) read(ctx context.Context, q queries, accountID string, since time.Time) ([]*core.UsageRow, error) {
	var rows []struct {
		Key          string  `db:"key"`
		Name         string  `db:"name"`
		Workspaces   int64   `db:"workspaces"`
		Turns        int64   `db:"turns"`
		Failures     int64   `db:"failures"`
		AgentSeconds float64 `db:"agent_seconds"`
	}
	if err := q.selectAll(ctx, &rows, t.query(), accountID, since); err != nil {
		return nil, err
	}
	out := make([]*core.UsageRow, len(rows))
	for i, r := range rows {
		out[i] = &core.UsageRow{Key: r.Key, Name: r.Name, Workspaces: r.Workspaces, Turns: r.Turns, Failures: r.Failures,
			AgentTime: time.Duration(r.AgentSeconds * float64(time.Second)).Round(time.Millisecond)}
	}
	return out, nil
}

func (q queries) UsageByMember(ctx context.Context, accountID string, since time.Time) (_ []*core.UsageRow, err error) {
	defer wrapErr(&err, "usage by member")
	return usageByMember.read(ctx, q, accountID, since)
}

func (q queries) UsageByProject(ctx context.Context, accountID string, since time.Time) (_ []*core.UsageRow, err error) {
	defer wrapErr(&err, "usage by project")
	return usageByProject.read(ctx, q, accountID, since)
}

func (q queries) UsageByAgent(ctx context.Context, accountID string, since time.Time) (_ []*core.UsageRow, err error) {
	defer wrapErr(&err, "usage by agent")
	return usageByAgent.read(ctx, q, accountID, since)
}
