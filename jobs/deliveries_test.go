package jobs

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wshub/wshub/core"
)

func TestDeliveriesAreClaimedOnANotificationOfTheDeliveryChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, w := &fakeDeliveriesCore{}, newFakeWaker()
		d := &Deliveries{Core: f, Waker: w, Log: quiet, Poll: time.Minute}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() { defer close(ran); d.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-ran })
		synctest.Wait()
		w.notify(core.WorkChannel)
		synctest.Wait()
		if got := f.count(); got != 1 {
			t.Fatalf("expected only the first claim after another channel's NOTIFY, got %d", got)
		}
		w.notify(core.DeliveryChannel)
		synctest.Wait()
		if got := f.count(); got != 2 {
			t.Fatalf("expected a claim on the delivery channel's NOTIFY, got %d claims", got)
		}
	})
}
