package jobs

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

// The loops' needs of core, each the few methods one loop calls: the hub passes core's
// groups (*core.Worker, *core.Deliveries, *core.ChatQueues, *core.Sweeps), and the
// loops' tests pass small fakes, so a loop is tested without a database.

// Waker is the hub's broadcaster of NOTIFY. Wait returns a channel signalled when
// channel is notified with key, with any key when key is "" (what the loops ask for),
// or when notifications may have been missed; stop stops the waiting. Every waiter of
// a channel gets every signal. Missed signals are harmless: the loops also poll.
type Waker interface {
	Wait(channel, key string) (<-chan struct{}, func())
}

// WorkerCore is what the workspace worker calls (*core.Worker).
type WorkerCore interface {
	ClaimWork(ctx context.Context, leaseFor time.Duration, limit int) ([]*core.Workspace, error)
	StepWorkspace(ctx context.Context, ws *core.Workspace, lease string) (more bool, err error)
	ShouldYield(ctx context.Context, ws *core.Workspace) (bool, error)
	RenewLease(ctx context.Context, id, token string, leaseFor time.Duration) (state core.WorkspaceState, ok bool, err error)
	ReleaseLease(ctx context.Context, id, token string) error
}

// DeliveriesCore is what the webhook delivery loop calls (*core.Deliveries).
type DeliveriesCore interface {
	ClaimDeliveries(ctx context.Context, leaseFor time.Duration, limit int) ([]*core.DeliveryJob, error)
	AttemptDelivery(ctx context.Context, j *core.DeliveryJob) (core.DeliveryReport, error)
}

// ChatCore is what the chat loops call (*core.ChatQueues): each queue's claim, and the
// handling or posting of one claimed item.
type ChatCore interface {
	ClaimChatEvents(ctx context.Context, leaseFor time.Duration, limit int) ([]*core.ChatEvent, error)
	HandleChatEvent(ctx context.Context, e *core.ChatEvent, handlers map[string]core.ChatEventHandler) (core.ChatEventReport, error)
	ClaimChatReplies(ctx context.Context, leaseFor time.Duration, limit int) ([]*core.ClaimedChatReply, error)
	PostChatReply(ctx context.Context, c *core.ClaimedChatReply, posters map[string]core.ChatPoster) (core.ChatPostReport, error)
	ClaimChatNotices(ctx context.Context, leaseFor time.Duration, limit int) ([]*core.ClaimedChatNotice, error)
	PostChatNotice(ctx context.Context, c *core.ClaimedChatNotice, posters map[string]core.ChatPoster) (core.ChatPostReport, error)
	ClaimChatStatuses(ctx context.Context, leaseFor time.Duration, limit int) ([]*core.ClaimedChatStatus, error)
	PostChatStatus(ctx context.Context, c *core.ClaimedChatStatus, posters map[string]core.ChatPoster) (core.ChatPostReport, error)
}

// SweepsCore is what the cron sweeps call (*core.Sweeps).
type SweepsCore interface {
	SweepLifecycle(ctx context.Context, cfg core.LifecycleConfig, tick time.Time) (moved int, err error)
	SweepRuntimes(ctx context.Context, cfg core.RuntimeSweepConfig, tick time.Time) (n int, err error)
	SweepMessages(ctx context.Context, tick time.Time) (expired, failed int64, err error)
	SweepRetention(ctx context.Context, period time.Duration, tick time.Time) (core.Pruned, error)
	SweepLostHosts(ctx context.Context, lostAfter time.Duration) (failed, released int, err error)
}

// SchedulesCore is what the schedule runner calls (*core.ScheduleRuns).
type SchedulesCore interface {
	RunDueSchedules(ctx context.Context) (recorded int, err error)
	NextScheduleTick(ctx context.Context) (time.Time, error)
}

// HostCore is what the host's heartbeat calls (*core.Sweeps).
type HostCore interface {
	Heartbeat(ctx context.Context, first bool) error
}

// The core groups are what the hub passes.
var (
	_ WorkerCore     = (*core.Worker)(nil)
	_ DeliveriesCore = (*core.Deliveries)(nil)
	_ ChatCore       = (*core.ChatQueues)(nil)
	_ SweepsCore     = (*core.Sweeps)(nil)
	_ HostCore       = (*core.Sweeps)(nil)
	_ SchedulesCore  = (*core.ScheduleRuns)(nil)
)
