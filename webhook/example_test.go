package webhook_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/wshub/wshub/webhook"
)

func ExampleVerify() {
	secret := "whsec_example"               // from POST /v1/api/webhooks, prefix included
	body := []byte(`{"eventId":"evt_123"}`) // the raw request body, exactly as received
	header := webhook.Sign(secret, time.Now(), body)

	fmt.Println(webhook.Verify(body, header, secret))

	// Any change to the bytes (here: re-encoding with a space) breaks the signature.
	err := webhook.Verify([]byte(`{"eventId": "evt_123"}`), header, secret)
	fmt.Println(errors.Is(err, webhook.ErrNoValidSignature))
	// Output:
	// <nil>
	// true
}

func ExampleConstructEvent() {
	secret := "whsec_example"
	body := []byte(`{"eventId":"evt_123","type":"workspace.turn.completed","createdAt":1700000000000,` +
		`"workspaceId":"ws_1","branch":"wshub/readme","turnId":"turn_7","outcome":"completed",` +
		`"reply":{"text":"Added CONTRIBUTING.md.","truncated":false},"messageId":"msg_9"}`)
	header := webhook.Sign(secret, time.Now(), body) // in a receiver: r.Header.Get(webhook.HeaderSignature)

	ev, err := webhook.ConstructEvent(body, header, secret)
	if err != nil {
		fmt.Println("reject with 400:", err)
		return
	}
	if ev.Type == webhook.TypeTurnCompleted {
		fmt.Printf("%s %s %s: %s\n", ev.WorkspaceID, ev.TurnID, ev.Outcome, ev.Reply.Text)
	}
	// Output:
	// ws_1 turn_7 completed: Added CONTRIBUTING.md.
}
