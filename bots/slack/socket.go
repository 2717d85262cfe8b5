package slack

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/wshub/wshub/core"
)

// RunSocketMode connects to Slack over Socket Mode with the app-level token (for hubs
// without a public address) until ctx ends. Each event is stored in the inbox before
// it is acknowledged, so an event Slack thinks was taken is never lost; one that could
// not be stored is not acknowledged and Slack sends it again. It returns nil once ctx
// ended, after its event loop has stopped too.
func (b *Bot) RunSocketMode(ctx context.Context) error {
	client := socketmode.New(b.api)
	ctx, stop := context.WithCancel(ctx)
	var loop sync.WaitGroup
	defer loop.Wait()
	defer stop() // the connection ended: so does the event loop
	loop.Go(func() {
		for {
			var evt socketmode.Event
			select {
			case <-ctx.Done():
				return
			case evt = <-client.Events:
			}
			if evt.Type == socketmode.EventTypeInteractive && evt.Request != nil {
				// Acknowledged first (within Slack's 3 seconds), then taken: a press
				// is not resent, and taking it twice would change nothing.
				if err := client.Ack(*evt.Request); err != nil {
					b.log.Warn("slack socket ack", "err", err)
				}
				if ic, ok := evt.Data.(slack.InteractionCallback); ok {
					b.press(ctx, ic)
				}
				continue
			}
			if evt.Type != socketmode.EventTypeEventsAPI || evt.Request == nil {
				continue
			}
			if err := b.accept(ctx, evt.Request.Payload); err != nil {
				b.log.Error("slack socket event not stored; Slack will resend it", "err", err)
				continue
			}
			if err := client.Ack(*evt.Request); err != nil {
				b.log.Warn("slack socket ack", "err", err)
			}
		}
	})
	if err := client.RunContext(ctx); ctx.Err() == nil {
		return err
	}
	return nil
}

// accept stores an event callback envelope in the inbox (duplicates are dropped).
func (b *Bot) accept(ctx context.Context, payload []byte) error {
	var cb callback
	if err := json.Unmarshal(payload, &cb); err != nil || cb.Type != "event_callback" {
		return nil // nothing the bot handles
	}
	_, err := b.svc.AcceptChatEvent(ctx, core.ChatArrival{Platform: core.PlatformSlack, EventID: cb.EventID, ThreadKey: cb.threadKey(), Payload: payload})
	return err
}
