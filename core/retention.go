package core

import (
	"context"
	"fmt"
	"time"
)

// MinRetention is the shortest retention period the hub accepts: behaviour.md keeps
// idempotency receipts at least 30 days, and the other pruned rows share the period.
const MinRetention = 30 * 24 * time.Hour

// retentionBatch bounds each delete statement. Every batch commits on its own, so its row
// locks and WAL stay small and no worker or request queues behind a long delete.
const retentionBatch = 1000

// RetentionQueries prune rows the hub keeps only for a while. Each deletes at most limit
// rows older than before in one statement, through an index on the age column, skipping
// rows another transaction holds (the next sweep takes them), and returns how many went.
type RetentionQueries interface {
	// PruneReceipts deletes idempotency receipts created before.
	PruneReceipts(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneChatInbox deletes handled (done or failed) chat events received before.
	PruneChatInbox(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneChatDeliveries deletes delivered or failed chat replies created before.
	PruneChatDeliveries(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneChatNotices deletes posted or failed chat notices created before.
	PruneChatNotices(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneChatStatuses deletes the bookkeeping of turn status messages that are done
	// (or given up) whose turn started before.
	PruneChatStatuses(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneWebhookDeliveries deletes delivered or failed webhook deliveries created before.
	PruneWebhookDeliveries(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneEvents deletes events created before that no webhook delivery refers to.
	PruneEvents(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneCronRuns deletes the record of sweep ticks before (no replica claims a tick
	// that old again).
	PruneCronRuns(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneAppSessions deletes app sessions whose absolute end was before (ended or
	// not: none of them signs anyone in any more).
	PruneAppSessions(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneSignInLinks deletes one-time sign-in links that expired before.
	PruneSignInLinks(ctx context.Context, before time.Time, limit int) (int64, error)
}

// Pruned counts the rows one retention sweep deleted, by table.
type Pruned struct {
	Receipts, ChatInbox, ChatDeliveries, ChatNotices, ChatStatuses, WebhookDeliveries, Events, CronRuns int64
	AppSessions, SignInLinks                                                                            int64
}

// Total is the number of rows deleted.
func (p Pruned) Total() int64 {
	return p.Receipts + p.ChatInbox + p.ChatDeliveries + p.ChatNotices + p.ChatStatuses + p.WebhookDeliveries + p.Events + p.CronRuns +
		p.AppSessions + p.SignInLinks
}

// SweepRetention deletes what is older than period: idempotency receipts, handled chat
// events, settled chat replies, notices and webhook deliveries, events left with no
// delivery, the sweeps' own tick records, and app sessions and sign-in links long
// past their end. The audit log is kept: it is an account's record of who changed what.
// Pending rows are never touched, however old. It runs once per tick across replicas.
//
// Unlike the other sweeps, the work is not done in the transaction that claims the tick:
// that would hold every deleted row's lock until the last batch. The tick is claimed and
// committed first, then each batch is its own statement. A sweep that fails half way has
// still used its tick; deleting is idempotent, so the next tick finishes the job.
func (sw *Sweeps) SweepRetention(ctx context.Context, period time.Duration, tick time.Time) (Pruned, error) {
	s := sw.w
	var p Pruned
	if period < MinRetention { // a guard for callers that skipped configuration checks
		return p, fmt.Errorf("retention %s is below the %s minimum", period, MinRetention)
	}
	var claimed bool // false: another replica has or ran this tick
	if err := s.store.InTx(ctx, func(q Queries) (err error) {
		claimed, err = q.ClaimCronTick(ctx, "retention", tick, s.clock.Now())
		return err
	}); err != nil || !claimed {
		return p, err
	}
	before := s.clock.Now().Add(-period)
	// Deliveries go before events, so the events they leave orphaned go in this sweep.
	steps := []struct {
		n     *int64
		prune func(context.Context, time.Time, int) (int64, error)
	}{
		{&p.Receipts, s.store.PruneReceipts},
		{&p.ChatInbox, s.store.PruneChatInbox},
		{&p.ChatDeliveries, s.store.PruneChatDeliveries},
		{&p.ChatNotices, s.store.PruneChatNotices},
		{&p.ChatStatuses, s.store.PruneChatStatuses},
		{&p.WebhookDeliveries, s.store.PruneWebhookDeliveries},
		{&p.Events, s.store.PruneEvents},
		{&p.CronRuns, s.store.PruneCronRuns},
		{&p.AppSessions, s.store.PruneAppSessions},
		{&p.SignInLinks, s.store.PruneSignInLinks},
	}
	for _, st := range steps {
		for {
			n, err := st.prune(ctx, before, retentionBatch)
			*st.n += n
			if err != nil {
				return p, fmt.Errorf("prune: %w", err)
			}
			if n < retentionBatch { // the last batch; rows skipped as locked wait for the next sweep
				break
			}
		}
	}
	return p, nil
}
