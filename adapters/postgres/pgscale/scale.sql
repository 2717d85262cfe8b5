-- A busy hub's history, generated in a few statements (pgscale.Generate). Parameters
-- are named in each statement's comment. Workspace g (1-based, oldest first) is
-- ws_<prefix><g in 8 digits>; the newest per_account are the caller's account's, the
-- others in accounts acct_<prefix><n> of per_account each, with a project and a
-- webhook endpoint each (the caller's endpoint is wh_<prefix>0).

-- name: accounts ($1 prefix, $2 extra accounts)
INSERT INTO accounts (id, name, entitled, created_at)
SELECT 'acct_' || $1 || n, 'scale ' || n, true, now() - interval '1 year'
FROM generate_series(1, $2::int) n;

-- name: projects ($1 prefix, $2 extra accounts)
INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
SELECT 'prj_' || $1 || n, 'acct_' || $1 || n, '/scale/' || n, 'scale', 'ready',
    now() - interval '1 year', now() - interval '1 year'
FROM generate_series(1, $2::int) n;

-- name: webhooks ($1 prefix, $2 extra accounts, $3 the caller's account)
-- One endpoint per account. Its secret is a placeholder: every delivery generated is
-- settled, so none is ever signed with it.
INSERT INTO webhooks (id, account_id, url, description, secret_sealed, created_at)
SELECT 'wh_' || $1 || n, CASE WHEN n = 0 THEN $3 ELSE 'acct_' || $1 || n END,
    'https://scale.example/' || n, '', '\x00', now() - interval '1 year'
FROM generate_series(0, $2::int) n;

-- name: workspaces ($1 prefix, $2 workspaces, $3 per account, $4 messages each, $5 the caller's account, $6 its project)
-- One workspace every 5 minutes, the newest an hour ago (100,000 are a year), its
-- $4 / 2 turns a minute apart. The caller's account holds the newest $3, so what it
-- reads is the same at every size. States as the lifecycle sweeps leave them (idle
-- 10 minutes, archive after a week, delete after 30 days), except that a workspace
-- active in the last day is still ready (the bench's hub runs with a longer idle
-- timeout); a fifth were deleted by hand at any age.
INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
    origin, state, status_code, startup_phase, runtime_state, latest_seq, last_turn_id, last_turn_outcome,
    last_turn_completed_at, created_at, updated_at, last_activity_at, state_changed_at)
SELECT 'ws_' || $1 || lpad(g::text, 8, '0'),
    CASE WHEN g > $2::int - $3::int THEN $5 ELSE 'acct_' || $1 || (($2::int - g) / $3::int) END,
    CASE WHEN g > $2::int - $3::int THEN $6 ELSE 'prj_' || $1 || (($2::int - g) / $3::int) END,
    'local', 'agent_1', 'm', 'full-access', 'scale-' || g, 'main', 'api', s.state, s.state,
    'running', CASE WHEN s.state = 'ready' THEN 'online' ELSE 'offline' END,
    $4::int, CASE WHEN $4::int >= 2 THEN 'turn_' || $1 || lpad(g::text, 8, '0') || '_' || $4::int / 2 END,
    CASE WHEN $4::int >= 2 THEN 'completed' END, CASE WHEN $4::int >= 2 THEN t.last END,
    t.created, s.changed, CASE WHEN s.state = 'ready' THEN now() - (g % 300) * interval '1 second' ELSE t.last END,
    s.changed
FROM generate_series(1, $2::int) g,
    LATERAL (SELECT now() - ($2::int - g) * interval '5 minutes' - interval '1 hour' AS created) c,
    LATERAL (SELECT c.created AS created, c.created + $4::int * interval '1 minute' AS last) t,
    LATERAL (SELECT CASE WHEN g % 5 = 0 THEN 'deleted'
                         WHEN t.last > now() - interval '1 day' THEN 'ready'
                         WHEN t.last > now() - interval '7 days 10 minutes' THEN 'paused'
                         WHEN t.last > now() - interval '37 days 10 minutes' THEN 'archived'
                         ELSE 'deleted' END AS state,
                    CASE WHEN g % 5 = 0 OR t.last > now() - interval '1 day' THEN t.last
                         WHEN t.last > now() - interval '7 days 10 minutes' THEN t.last + interval '10 minutes'
                         WHEN t.last > now() - interval '37 days 10 minutes' THEN t.last + interval '7 days 10 minutes'
                         ELSE t.last + interval '37 days 10 minutes' END AS changed) s;

-- name: messages ($1 prefix, $2 first, $3 last, $4 sealed texts (may be empty), $5 messages each, $6 workspaces)
-- Messages $2 to $3 (0-based, workspace by workspace), settled turns of a user message
-- and its reply a minute apart; text $4[i] for message $2 + i - 1, else a placeholder.
INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome, created_at)
SELECT 'msg_' || $1 || lpad(x.g::text, 8, '0') || '_' || x.seq, 'ws_' || $1 || lpad(x.g::text, 8, '0'), x.seq,
    CASE WHEN x.seq % 2 = 1 THEN 'user' ELSE 'assistant' END, COALESCE(s.sealed, '\x00'), 'settled',
    'turn_' || $1 || lpad(x.g::text, 8, '0') || '_' || (x.seq + 1) / 2,
    CASE WHEN x.seq % 2 = 0 THEN 'completed' END,
    now() - ($6::int - x.g) * interval '5 minutes' - interval '1 hour' + x.seq * interval '1 minute'
FROM (SELECT k, k / $5::bigint + 1 AS g, k % $5::bigint + 1 AS seq FROM generate_series($2::bigint, $3::bigint) k) x
LEFT JOIN unnest($4::bytea[]) WITH ORDINALITY s(sealed, i) ON s.i = x.k - $2::bigint + 1;

-- name: events ($1 prefix, $2 workspaces, $3 per account, $4 messages each)
-- Each workspace's last turn: its event, delivered to its account's endpoint at the
-- first attempt. The body is a placeholder: a settled delivery is never sent again.
INSERT INTO events (id, account_id, workspace_id, turn_id, type, body_sealed, created_at)
SELECT 'ev_' || $1 || lpad(g::text, 8, '0'), CASE WHEN g > $2::int - $3::int THEN a.id ELSE 'acct_' || $1 || (($2::int - g) / $3::int) END,
    'ws_' || $1 || lpad(g::text, 8, '0'), 'turn_' || $1 || lpad(g::text, 8, '0') || '_' || $4::int / 2,
    'workspace.turn.completed', '\x00',
    now() - ($2::int - g) * interval '5 minutes' - interval '1 hour' + $4::int * interval '1 minute'
FROM generate_series(1, $2::int) g, (SELECT account_id AS id FROM webhooks WHERE id = 'wh_' || $1 || '0') a;

-- name: deliveries ($1 prefix, $2 workspaces, $3 per account)
INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, status, attempts, max_attempts,
    next_attempt_at, last_status_code, last_attempt_at, delivered_at, created_at)
SELECT 'dlv_' || substr(e.id, 4), e.account_id, 'wh_' || $1 || CASE WHEN g > $2::int - $3::int THEN 0 ELSE ($2::int - g) / $3::int END, e.id, 'delivered', 1, 20,
    e.created_at, 200, e.created_at, e.created_at, e.created_at
FROM generate_series(1, $2::int) g JOIN events e ON e.id = 'ev_' || $1 || lpad(g::text, 8, '0');

-- name: attempts ($1 prefix, $2 workspaces)
INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
SELECT d.id, 1, d.created_at, 40, 200
FROM generate_series(1, $2::int) g JOIN webhook_deliveries d ON d.id = 'dlv_' || $1 || lpad(g::text, 8, '0');
