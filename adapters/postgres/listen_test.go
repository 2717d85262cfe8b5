package postgres_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// The hub's one broadcaster (Fanout) fed by a real LISTEN connection: waiters by
// channel and key, "" for a whole channel, every waiter woken after a reconnect, and
// stop functions that let waiters go.

// waitLimit bounds each wait for a signal; a signal that should come comes in
// milliseconds.
const waitLimit = 10 * time.Second

type listening struct {
	t      *testing.T
	fanout *postgres.Fanout
	store  *postgres.Store
	seq    int
}

// listen runs a Listener on channels (and "sentinel") of a fresh database until t ends.
func listen(t *testing.T, channels ...string) *listening {
	t.Helper()
	store, url := pgtest.NewStore(t)
	f := postgres.NewFanout()
	l, err := postgres.Listen(url, nil, f, append(channels, "sentinel")...)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	return &listening{t: t, fanout: f, store: store}
}

func (l *listening) notify(channel, payload string) {
	l.t.Helper()
	if _, err := l.store.DB().Exec(`SELECT pg_notify($1, $2)`, channel, payload); err != nil {
		l.t.Fatalf("notify %s %q: %v", channel, payload, err)
	}
}

// settle returns once every notification sent before has been delivered: one
// connection receives them in the order they were committed, so once a sentinel sent
// after them has arrived, they have too.
func (l *listening) settle() {
	l.t.Helper()
	l.seq++
	key := fmt.Sprint(l.seq)
	wake, stop := l.fanout.Wait("sentinel", key)
	defer stop()
	l.notify("sentinel", key)
	woken(l.t, wake, "the sentinel")
}

func woken(t *testing.T, wake <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wake:
	case <-time.After(waitLimit):
		t.Fatalf("%s was not woken within %s", what, waitLimit)
	}
}

func notWoken(t *testing.T, wake <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wake:
		t.Fatalf("%s was woken", what)
	default:
	}
}

type waiter struct {
	wake <-chan struct{}
	stop func()
}

func waiters(f *postgres.Fanout, n int, channel, key string) []waiter {
	ws := make([]waiter, n)
	for i := range ws {
		ws[i].wake, ws[i].stop = f.Wait(channel, key)
	}
	return ws
}

func TestFanoutWakesEveryWaiterOfTheKeyAndEveryWaiterOfTheWholeChannel(t *testing.T) {
	l := listen(t, "a", "b")
	keyed := waiters(l.fanout, 100, "a", "ws1")
	anyKey := waiters(l.fanout, 100, "a", "")
	otherKey := waiters(l.fanout, 10, "a", "ws2")
	otherChannel := waiters(l.fanout, 10, "b", "ws1")
	otherChannelAnyKey := waiters(l.fanout, 10, "b", "")

	l.notify("a", "ws1")
	for i, w := range keyed {
		woken(t, w.wake, fmt.Sprintf("waiter %d of (a, ws1)", i))
	}
	for i, w := range anyKey {
		woken(t, w.wake, fmt.Sprintf("waiter %d of the whole channel a", i))
	}
	l.settle()
	for i, w := range otherKey {
		notWoken(t, w.wake, fmt.Sprintf("waiter %d of (a, ws2)", i))
	}
	for i, w := range append(otherChannel, otherChannelAnyKey...) {
		notWoken(t, w.wake, fmt.Sprintf("waiter %d of channel b", i))
	}
}

func TestFanoutWakesAWholeChannelWaiterOnANotificationWithoutPayload(t *testing.T) {
	l := listen(t, "a")
	anyKey := waiters(l.fanout, 3, "a", "")
	keyed := waiters(l.fanout, 3, "a", "ws1")
	l.notify("a", "")
	for _, w := range anyKey {
		woken(t, w.wake, "a waiter of the whole channel")
	}
	l.settle()
	for _, w := range keyed {
		notWoken(t, w.wake, "a waiter of (a, ws1)")
	}
}

func TestFanoutHoldsOneSignalForAWaiterThatWasBusy(t *testing.T) {
	l := listen(t, "a")
	w := waiters(l.fanout, 1, "a", "")[0]
	l.notify("a", "1")
	l.notify("a", "2")
	l.settle()
	woken(t, w.wake, "the waiter")
	notWoken(t, w.wake, "the waiter, a second time,")
}

func TestFanoutWakesEveryWaiterAfterTheListenConnectionIsReplaced(t *testing.T) {
	l := listen(t, "a", "b")
	all := append(waiters(l.fanout, 5, "a", "ws1"), waiters(l.fanout, 5, "a", "")...)
	all = append(all, waiters(l.fanout, 5, "b", "ws2")...)
	// The connection drops (a restarted server, a failover): notifications sent until
	// the Listener has reconnected are lost, so every waiter must look for itself.
	var ended int
	err := l.store.DB().Get(&ended, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`)
	if err != nil || ended != 1 {
		t.Fatalf("expected to end the one LISTEN connection, ended %d: %v", ended, err)
	}
	for i, w := range all {
		woken(t, w.wake, fmt.Sprintf("waiter %d", i))
	}
	l.settle() // and it listens again
}

func TestFanoutStopLetsOnlyItsOwnWaiterGo(t *testing.T) {
	l := listen(t, "a")
	ws := waiters(l.fanout, 3, "a", "ws1")
	whole := waiters(l.fanout, 2, "a", "")
	ws[0].stop()
	ws[0].stop() // twice: harmless
	whole[0].stop()
	l.notify("a", "ws1")
	woken(t, ws[1].wake, "a waiter still waiting")
	woken(t, ws[2].wake, "a waiter still waiting")
	woken(t, whole[1].wake, "a whole channel waiter still waiting")
	l.settle()
	notWoken(t, ws[0].wake, "a stopped waiter")
	notWoken(t, whole[0].wake, "a stopped whole channel waiter")
	// A key whose waiters all stopped is waited for again as new.
	for _, w := range ws[1:] {
		w.stop()
	}
	again := waiters(l.fanout, 1, "a", "ws1")[0]
	l.notify("a", "ws1")
	woken(t, again.wake, "a new waiter of a key whose waiters had all stopped")
}

func TestListenerRunReturnsOnceItsConnectionIsClosedAndItsGoroutinesHaveStopped(t *testing.T) {
	store, url := pgtest.NewStore(t)
	f := postgres.NewFanout()
	l, err := postgres.Listen(url, nil, f, "a")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); l.Run(ctx) }()
	if n := listenerGoroutines(); n == 0 {
		t.Fatal("expected the LISTEN connection's goroutines while it runs")
	}
	// Notifications pq is still passing on when Run stops must not hold its goroutine:
	// Run stops once the first of a thousand has arrived.
	first, stop := f.Wait("a", "1")
	defer stop()
	if _, err := store.DB().Exec(`SELECT pg_notify('a', g::text) FROM generate_series(1, 1000) g`); err != nil {
		t.Fatal(err)
	}
	woken(t, first, "the first waiter")
	cancel()
	<-ran
	// pq closes Notify as its goroutine's last act: it may still be returning.
	if !eventually.Within(waitLimit, func() bool { return listenerGoroutines() == 0 }) {
		t.Fatalf("the LISTEN connection's goroutines still run after Run returned:\n%s", stacks())
	}
}

// listenerGoroutines counts goroutines in lib/pq's Listener.
func listenerGoroutines() int {
	n := 0
	for g := range strings.SplitSeq(stacks(), "\n\n") {
		if strings.Contains(g, "github.com/lib/pq.(*Listener") {
			n++
		}
	}
	return n
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
