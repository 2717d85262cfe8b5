package jobs

import (
	"context"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wshub/wshub/core"
)

// The chat loops and their wake-ups, on a fake clock that does not move: each claim
// counted here comes from a wake-up, not from a poll.

func runChat(t *testing.T, f *fakeChatCore, w Waker) {
	c := &Chat{Core: f, Waker: w, Log: quiet, Poll: time.Minute, StatusPoll: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
}

func TestOneNotificationOfTheRepliesChannelWakesBothTheRepliesAndTheNotices(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, w := &fakeChatCore{}, newFakeWaker()
		runChat(t, f, w)
		synctest.Wait()
		w.notify(core.ChatReplyChannel)
		synctest.Wait()
		want := map[string]int{"events": 1, "replies": 2, "notices": 2, "statuses": 1}
		if got := f.count(); !maps.Equal(got, want) {
			t.Fatalf("expected claims %v, got %v", want, got)
		}
	})
}

func TestEachChatQueueWakesOnItsOwnChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, w := &fakeChatCore{}, newFakeWaker()
		runChat(t, f, w)
		synctest.Wait()
		w.notify(core.ChatEventChannel)
		synctest.Wait()
		want := map[string]int{"events": 2, "replies": 1, "notices": 1, "statuses": 1}
		if got := f.count(); !maps.Equal(got, want) {
			t.Fatalf("after an event's NOTIFY: expected claims %v, got %v", want, got)
		}
		w.notify(core.ChatStatusChannel)
		synctest.Wait()
		want["statuses"]++
		if got := f.count(); !maps.Equal(got, want) {
			t.Fatalf("after a status's NOTIFY: expected claims %v, got %v", want, got)
		}
	})
}

func TestChatLeavesNoWaiterBehindWhenItStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, w := &fakeChatCore{}, newFakeWaker()
		c := &Chat{Core: f, Waker: w, Log: quiet}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() { defer close(ran); c.Run(ctx) }()
		synctest.Wait()
		if got := w.waiting(); got != 4 {
			t.Fatalf("expected a waiter per queue (4), got %d", got)
		}
		cancel()
		<-ran
		if got := w.waiting(); got != 0 {
			t.Fatalf("expected no waiter once Run returned, got %d", got)
		}
	})
}
