package main

// The scale run: the API's figures, the claim, and a run of the sweeps and of a
// retention batch, on a database holding 1,000 workspaces and then one holding 100,000
// and 2 million messages (pgscale, by SQL). The account measured holds the same 1,000
// workspaces at both sizes (the newest; the older ones are other accounts'), so any
// difference is what the rest of the history costs.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgscale"
	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/core"
)

const (
	scaleMessagesEach = 20   // each generated workspace's messages: 100,000 workspaces hold 2 million
	scalePerAccount   = 1000 // workspaces per account, the measured one's included
	scalePageMessages = 1000 // the page workspace's messages (a 200-message page from its middle)
	scaleRepeats      = 200  // runs of the claim, the sweeps and the retention batch, each size (over the rounds)
	scaleTarget       = 1.3  // every p50 at the largest size within this of its value at the smallest
)

// scaleFigures are the scale run's results, one column per size.
type scaleFigures struct {
	sizes    []scaleSize
	notes    []string
	duration time.Duration
}

type scaleSize struct {
	workspaces, messages int
	generate             time.Duration // pgscale and ANALYZE
	p50                  map[string]time.Duration
}

// scaleNames are the figures in the order reported.
var scaleNames = []string{"GET workspace, 8 clients", "list workspaces (the account's 1,000), 1 client",
	"a 200-message page, 8 clients", "send, runtime idle, 8 clients", "claim (8 workspaces with a queued message, rolled back)",
	"sweeps: lifecycle, messages, runtimes (rolled back)", "retention: a batch of 1,000 deliveries and of 1,000 events (rolled back)"}

// scaleRounds: each figure is measured this many times at each size, the sizes taking
// turns, and its p50 is the lowest of the rounds': the machine is shared, and the
// round least disturbed by others' work is the nearest to the hub's own cost (a burst
// of someone else's work lands on one round of one size, not on all of them).
const scaleRounds = 5

// scaleDB is one size's database, its hub and what the figures address.
type scaleDB struct {
	r     *run
	size  scaleSize
	store *postgres.Store
	srv   *server
	ready []string // the account's ready workspaces, newest first
	p50s  map[string][]time.Duration
}

// scale generates every size's database, then measures each figure on all of them in
// turn, scaleRounds times.
func (r *run) scale(ctx context.Context, sizes []int) error {
	r.scaleFigures.duration = r.dur
	var dbs []*scaleDB
	defer func() {
		for _, d := range dbs {
			d.close()
			r.scaleFigures.notes = append(r.scaleFigures.notes, d.r.notes...)
		}
	}()
	for _, n := range sizes {
		d := &scaleDB{r: &run{base: r.base, hubBin: r.hubBin, dur: r.dur, pglog: r.pglog, pin: r.pin, only: "Scale",
			workspaces: n, messages: scalePageMessages, dbSuffix: fmt.Sprintf("_scale%d", n), captured: map[string][]string{}},
			p50s: map[string][]time.Duration{}}
		dbs = append(dbs, d)
		if err := d.open(ctx); err != nil {
			return fmt.Errorf("%d workspaces: %w", n, err)
		}
	}
	for round := range scaleRounds {
		for _, d := range dbs {
			if err := d.measure(ctx, round); err != nil {
				return fmt.Errorf("%d workspaces: %w", d.size.workspaces, err)
			}
		}
	}
	for _, d := range dbs {
		d.size.p50 = map[string]time.Duration{}
		for name, ds := range d.p50s {
			d.size.p50[name] = slices.Min(ds)
		}
		r.scaleFigures.sizes = append(r.scaleFigures.sizes, d.size)
	}
	return nil
}

// open makes the size's database, generates its history and starts its hub.
func (d *scaleDB) open(ctx context.Context) error {
	r := d.r
	d.size = scaleSize{workspaces: r.workspaces, messages: r.workspaces*scaleMessagesEach + scalePageMessages}
	store, _, acct, err := r.tenant(ctx)
	if err != nil {
		return err
	}
	d.store = store
	sealer, err := seal.FromBase64(r.contentKey)
	if err != nil {
		return err
	}
	spec := pgscale.Spec{AccountID: acct.ID, ProjectID: r.tinyProject, Prefix: "bench", Workspaces: r.workspaces,
		PerAccount: scalePerAccount, Messages: scaleMessagesEach, Seal: sealer.Seal}
	start := time.Now()
	if err := pgscale.Generate(ctx, store.DB().DB, spec); err != nil {
		return err
	}
	// The page: one more workspace of the account, its messages sealed as B2's are.
	if err := seedWorkspaces(ctx, store.DB().DB, acct.ID, r.tinyProject, "ws_page", 1); err != nil {
		return err
	}
	r.msgWS = "ws_page00000001"
	if err := r.seedMessages(ctx, store.DB().DB); err != nil {
		return err
	}
	d.ready = spec.Ready(33)
	if err := d.queue(ctx, sealer); err != nil {
		return err
	}
	if _, err := store.DB().ExecContext(ctx, `ANALYZE`); err != nil {
		return err
	}
	d.size.generate = time.Since(start)
	fmt.Printf("scale: %d workspaces and %d messages generated in %s\n", d.size.workspaces, d.size.messages, d.size.generate.Round(time.Millisecond))
	// The sweeps leave a workspace active in the last day ready for the run's length.
	d.srv, err = r.serve(ctx, "WSHUB_IDLE_TIMEOUT=24h")
	return err
}

// queued is the seq of the one message the claim finds queued on each workspace the
// sends go to.
const queued = scaleMessagesEach + 1

// queue gives each workspace the sends go to one queued message, the claim's work.
func (d *scaleDB) queue(ctx context.Context, sealer *seal.AESGCM) error {
	ws, ids := d.ready[1:9], make([]string, 8)
	sealed := make(pq.ByteaArray, 8)
	for i, w := range ws {
		ids[i] = fmt.Sprintf("msg_queued_%s", w)
		b, err := sealer.Seal([]byte("queued"), "message:"+w+":"+ids[i])
		if err != nil {
			return err
		}
		sealed[i] = b
	}
	_, err := d.store.DB().ExecContext(ctx, `WITH m AS (
		INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
		SELECT v.id, v.ws, $3, 'user', v.sealed, 'pending', 'turn_' || v.id, now()
		FROM unnest($1::text[], $2::text[], $4::bytea[]) AS v(ws, id, sealed) RETURNING workspace_id)
		UPDATE workspaces SET latest_seq = $3 WHERE id IN (SELECT workspace_id FROM m)`,
		pq.StringArray(ws), pq.StringArray(ids), queued, sealed)
	return err
}

// unsend deletes what the round's sends queued (the runtime is off: nothing takes
// them), so that every round's claim, and every size's, finds the same work.
func (d *scaleDB) unsend(ctx context.Context) error {
	_, err := d.store.DB().ExecContext(ctx, `WITH gone AS (
		DELETE FROM messages WHERE workspace_id = ANY($1) AND seq > $2 RETURNING workspace_id)
		UPDATE workspaces SET latest_seq = $2 WHERE id = ANY($1)`, pq.StringArray(d.ready[1:9]), queued)
	return err
}

func (d *scaleDB) close() {
	if d.srv != nil {
		d.srv.stop()
	}
	if d.store != nil {
		d.store.Close()
	}
	d.r.teardown()
}

// measure takes one round of every figure.
func (d *scaleDB) measure(ctx context.Context, round int) error {
	r := d.r
	api := func(name string, clients int, next func(int) request) {
		res := r.load(ctx, d.srv.url, fmt.Sprintf("scale %d: %s", r.workspaces, name), clients, next)
		if res.errors > 0 {
			r.notes = append(r.notes, fmt.Sprintf("%d workspaces, round %d, %s: %d errors", r.workspaces, round+1, name, res.errors))
		}
		d.p50s[name] = append(d.p50s[name], res.p50)
	}
	api(scaleNames[0], 8, func(int) request { return request{method: "GET", path: "/v1/api/workspaces/" + d.ready[0]} })
	api(scaleNames[1], 1, func(int) request { return request{method: "GET", path: "/v1/api/workspaces"} })
	api(scaleNames[2], 8, func(int) request {
		return request{method: "GET", path: fmt.Sprintf("/v1/api/workspaces/%s/messages?afterSeq=%d&limit=200", r.msgWS, scalePageMessages/2)}
	})
	api(scaleNames[3], 8, func(i int) request {
		return request{method: "POST", path: "/v1/api/workspaces/" + d.ready[1+i] + "/messages", body: `{"text":"bench"}`}
	})
	if err := d.unsend(ctx); err != nil {
		return err
	}
	claim := func(q scaleQueries) error {
		_, err := q.ClaimWorkspaces(ctx, "lease_bench", 30*time.Second, 16, 50, "host_bench")
		return err
	}
	now := time.Now()
	sweeps := func(q scaleQueries) error {
		if _, err := q.IdleReadyWorkspaces(ctx, now.Add(-10*time.Minute), 500); err != nil {
			return err
		}
		for _, st := range []core.WorkspaceState{core.StatePaused, core.StateArchived} {
			if _, err := q.WorkspacesInStateSince(ctx, st, now.Add(-7*24*time.Hour), 500); err != nil {
				return err
			}
		}
		if _, err := q.ExpirePendingMessages(ctx, now.Add(-core.MessageExpiry)); err != nil {
			return err
		}
		if _, err := q.FailStrandedMessages(ctx); err != nil {
			return err
		}
		_, err := q.RevokeSilentRuntimes(ctx, now.Add(-time.Minute), now.Add(-time.Minute), 500)
		return err
	}
	// One full batch each, as SweepRetention takes them (deliveries first, then the
	// events they leave): the oldest 1,000, whatever their age, so that the smallest
	// history, younger than the retention period, has a batch to delete too.
	retention := func(q scaleQueries) error {
		if _, err := q.PruneWebhookDeliveries(ctx, now, 1000); err != nil {
			return err
		}
		_, err := q.PruneEvents(ctx, now, 1000)
		return err
	}
	for i, fn := range []func(scaleQueries) error{claim, sweeps, retention} {
		name := scaleNames[4+i]
		p50, err := rolledBack(ctx, d.store, fn)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("scale %d: %-60s p50 %6.2f ms\n", r.workspaces, name, ms(p50))
		d.p50s[name] = append(d.p50s[name], p50)
	}
	return nil
}

// scaleQueries are the store's statements the scale run times directly.
type scaleQueries interface {
	ClaimWorkspaces(ctx context.Context, token string, leaseFor time.Duration, limit, maxRunningTurns int, host string) ([]*core.Workspace, error)
	IdleReadyWorkspaces(ctx context.Context, idleSince time.Time, limit int) ([]string, error)
	WorkspacesInStateSince(ctx context.Context, state core.WorkspaceState, since time.Time, limit int) ([]string, error)
	ExpirePendingMessages(ctx context.Context, before time.Time) (int64, error)
	FailStrandedMessages(ctx context.Context) (int64, error)
	RevokeSilentRuntimes(ctx context.Context, seenBefore, startedBefore time.Time, limit int) ([]string, error)
	PruneWebhookDeliveries(ctx context.Context, before time.Time, limit int) (int64, error)
	PruneEvents(ctx context.Context, before time.Time, limit int) (int64, error)
}

var errRollback = errors.New("rolled back")

// rolledBack runs fn scaleRepeats/scaleRounds times, each in a transaction it rolls back (so each
// run finds the same rows), and returns the p50 of fn's time.
func rolledBack(ctx context.Context, store *postgres.Store, fn func(scaleQueries) error) (time.Duration, error) {
	var took []time.Duration
	for range scaleRepeats / scaleRounds {
		err := store.InTx(ctx, func(q core.Queries) error {
			sq, ok := q.(scaleQueries)
			if !ok {
				return fmt.Errorf("the store's transaction lacks the statements timed (%T)", q)
			}
			start := time.Now()
			if err := fn(sq); err != nil {
				return err
			}
			took = append(took, time.Since(start))
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			return 0, err
		}
	}
	return pct(took, 50), nil
}

// markdown writes the scale run's section: each p50 at every size, and the largest
// beside the smallest.
func (f *scaleFigures) markdown(b *strings.Builder) {
	if len(f.sizes) == 0 && len(f.notes) == 0 {
		return
	}
	b.WriteString("\n" + scaleBegin + "\n\n## Scale: flat as the data grows\n\n")
	b.WriteString("The same figures on a database holding each size of history, generated by SQL (`adapters/postgres/pgscale`): ")
	fmt.Fprintf(b, "a workspace every 5 minutes with %d messages (%d turns) each, its event and its delivered webhook, the states the ",
		scaleMessagesEach, scaleMessagesEach/2)
	fmt.Fprintf(b, "lifecycle sweeps leave; the account measured holds the newest %s at every size (the older belong to accounts of %s ",
		thousands(scalePerAccount), thousands(scalePerAccount))
	fmt.Fprintf(b, "each), and one more workspace with %s messages for the page. The sizes' databases and hubs (`wshub serve`, runtime off) ", thousands(scalePageMessages))
	fmt.Fprintf(b, "stand side by side; each figure is measured %d times, the sizes taking turns, and its p50 is the lowest of the rounds' (the round least disturbed by the machine's other work). ", scaleRounds)
	fmt.Fprintf(b, "API figures: %s a round; the claim, the sweeps and the retention batch (its oldest 1,000 rows, whatever their age): ", f.duration)
	fmt.Fprintf(b, "%d runs a round through the store, each rolled back. ", scaleRepeats/scaleRounds)
	fmt.Fprintf(b, "Target: every p50 at the largest size within %.1f× of the smallest.\n\n", scaleTarget)
	if len(f.sizes) == 0 {
		for _, n := range f.notes {
			fmt.Fprintf(b, "%s\n", n)
		}
		b.WriteString("\n" + scaleEnd + "\n")
		return
	}
	first, last := f.sizes[0], f.sizes[len(f.sizes)-1]
	b.WriteString("| p50, ms |")
	for _, s := range f.sizes {
		fmt.Fprintf(b, " %s workspaces, %s messages |", thousands(s.workspaces), thousands(s.messages))
	}
	b.WriteString(" largest / smallest | within target |\n|---|")
	b.WriteString(strings.Repeat("---|", len(f.sizes)+2) + "\n")
	for _, name := range scaleNames {
		fmt.Fprintf(b, "| %s |", name)
		for _, s := range f.sizes {
			fmt.Fprintf(b, " %.2f |", ms(s.p50[name]))
		}
		ratio := 0.0
		if first.p50[name] > 0 {
			ratio = float64(last.p50[name]) / float64(first.p50[name])
		}
		met := "no"
		if ratio > 0 && ratio <= scaleTarget {
			met = "yes"
		}
		fmt.Fprintf(b, " %.2f | %s |\n", ratio, met)
	}
	b.WriteString("| generating (SQL, ANALYZE), s |")
	for _, s := range f.sizes {
		fmt.Fprintf(b, " %.1f |", s.generate.Seconds())
	}
	b.WriteString(" | |\n")
	for _, n := range f.notes {
		fmt.Fprintf(b, "\n%s\n", n)
	}
	b.WriteString("\n" + scaleEnd + "\n")
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

const (
	scaleBegin = "<!-- Scale: written by make bench; `go run ./cmd/wshub-bench -only Scale` rewrites this part alone -->"
	scaleEnd   = "<!-- end of Scale -->"
)
