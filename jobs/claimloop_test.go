package jobs

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// claimLoop on a fake clock: what makes it claim (a free slot, a full batch, a wake-up
// of its channel, the poll), how much it asks for, and what it leaves when it returns.

// queue is a claim over n items whose work holds each until the test lets it go.
type queue struct {
	mu    sync.Mutex
	left  int
	asked []int // the free slots of each claim
	done  chan struct{}
}

func newQueue(n int) *queue { return &queue{left: n, done: make(chan struct{})} }

func (q *queue) claim(free int) []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, free)
	n := min(free, q.left)
	q.left -= n
	return make([]int, n)
}

func (q *queue) work(int) { <-q.done }

// finishOne lets one item in work finish.
func (q *queue) finishOne() { q.done <- struct{}{} }

func (q *queue) remaining() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.left
}

func (q *queue) claims() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.asked)
}

// loop runs claimLoop on q in t's bubble until t ends; work in hand must have finished.
func loop(t *testing.T, q *queue, slots int, w Waker, poll time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		claimLoop(ctx, slots, w, "work", poll, q.claim, q.work)
	}()
	t.Cleanup(func() { cancel(); <-ran })
}

func TestClaimLoopFillsItsSlotsAndClaimsAgainAsEachFrees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		q := newQueue(5)
		loop(t, q, 3, nil, time.Minute)
		synctest.Wait()
		// A full batch may mean more waits, but no slot is free: no second claim yet.
		if got := q.claims(); !slices.Equal(got, []int{3}) {
			t.Fatalf("expected one claim for 3 slots, got %v", got)
		}
		q.finishOne()
		synctest.Wait()
		q.finishOne()
		synctest.Wait()
		if got := q.claims(); !slices.Equal(got, []int{3, 1, 1}) {
			t.Fatalf("expected a claim of one slot as each item finished, got %v", got)
		}
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("expected the claims at once, not on the poll; %s passed", waited)
		}
		close(q.done)
	})
}

func TestClaimLoopDrainsABacklogAtOnceThenSleepsUntilThePoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		q := newQueue(5)
		close(q.done) // work is instant
		loop(t, q, 2, nil, time.Minute)
		synctest.Wait()
		// Full batches and freed slots make it claim again at once until a claim comes
		// back short; the backlog is gone without waiting for the poll.
		if left := q.remaining(); left != 0 || time.Since(start) != 0 {
			t.Fatalf("expected the backlog claimed at once, %d left after %s", left, time.Since(start))
		}
		claims := q.claims()
		if last := claims[len(claims)-1]; last != 2 {
			t.Fatalf("expected the last claim to ask for every slot, got %v", claims)
		}
		time.Sleep(time.Minute - time.Nanosecond) // sleep: fake time under testing/synctest: up to a nanosecond before the poll
		if got := len(q.claims()); got != len(claims) {
			t.Fatalf("expected no claim before the poll, got %d more", got-len(claims))
		}
		time.Sleep(time.Nanosecond) // sleep: fake time under testing/synctest: the poll is due
		synctest.Wait()
		if got := len(q.claims()); got != len(claims)+1 {
			t.Fatalf("expected one claim on the poll, got %d more", got-len(claims))
		}
	})
}

func TestClaimLoopClaimsOnAWakeUpOfItsOwnChannelOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		q := newQueue(0)
		w := newFakeWaker()
		loop(t, q, 2, w, time.Minute)
		synctest.Wait()
		w.notify("other")
		synctest.Wait()
		if got := len(q.claims()); got != 1 {
			t.Fatalf("expected only the first claim after another channel's wake-up, got %d", got)
		}
		w.notify("work")
		synctest.Wait()
		if got := len(q.claims()); got != 2 {
			t.Fatalf("expected a claim on its channel's wake-up, got %d claims", got)
		}
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("expected the wake-up's claim at once; %s passed", waited)
		}
	})
}

func TestClaimLoopPollsWhenNoWakeUpComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(0)
		loop(t, q, 2, newFakeWaker(), 2*time.Second)
		time.Sleep(5 * time.Second) // sleep: fake time under testing/synctest: several polls pass
		synctest.Wait()
		if got := len(q.claims()); got != 3 {
			t.Fatalf("expected claims at 0, 2 and 4 s, got %d", got)
		}
	})
}

func TestClaimLoopReturnsOnlyAfterTheItemsInHandAndStopsWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(2)
		w := newFakeWaker()
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			claimLoop(ctx, 2, w, "work", time.Second, q.claim, q.work)
		}()
		synctest.Wait()
		if w.waiting() != 1 {
			t.Fatalf("expected the loop waiting for wake-ups, got %d waiters", w.waiting())
		}
		cancel()
		synctest.Wait()
		select {
		case <-ran:
			t.Fatal("claimLoop returned with two items in hand")
		default:
		}
		q.finishOne()
		q.finishOne()
		<-ran
		if w.waiting() != 0 {
			t.Fatalf("expected no waiter left once the loop returned, got %d", w.waiting())
		}
		claims := len(q.claims())
		time.Sleep(5 * time.Second) // sleep: fake time under testing/synctest: several polls pass
		if got := len(q.claims()); got != claims {
			t.Fatalf("expected no claim once the loop returned, got %d more", got-claims)
		}
	})
}
