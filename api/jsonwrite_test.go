package api

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The wire shapes jsonwrite.go writes by hand are the types of wire.go; json.Marshal
// of them is the reference its bytes must equal.

// marshal is json.Marshal, failing the test on an error.
func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// trickyStrings are what appendString must escape as Marshal does.
var trickyStrings = []string{
	"", "plain", `quote " backslash \ slash /`, "<script>&amp;</script>", "\x00\x01\x07\b\f\n\r\t\x1f\x7f",
	"\u2028 and \u2029", "héllo wörld, 日本語, 🎉", "bad \xff utf-8 \xc3", "\xed\xa0\x80 a surrogate", "trailing \xe2\x80",
}

func TestAppendStringIsMarshal(t *testing.T) {
	for _, s := range trickyStrings {
		if got, want := string(appendString(nil, s)), marshal(t, s); got != want {
			t.Errorf("appendString(%q) = %s, Marshal %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString([]byte("prefix"), s)), "prefix"+marshal(t, s); got != want {
			t.Fatalf("appendString(%q) = %s, Marshal %s", s, got, want)
		}
	})
}

// randomText draws from the strings that need escaping and from ordinary ones, or is
// empty (the omitempty members).
func randomText(r *rand.Rand) string {
	if r.IntN(4) == 0 {
		return ""
	}
	var sb strings.Builder
	for range r.IntN(4) + 1 {
		sb.WriteString(trickyStrings[r.IntN(len(trickyStrings))])
	}
	return sb.String()
}

func randomTime(r *rand.Rand) time.Time {
	return time.UnixMicro(r.Int64N(4e15)).In(time.FixedZone("x", r.IntN(7)*3600))
}

func maybeTime(r *rand.Rand) *time.Time {
	if r.IntN(2) == 0 {
		return nil
	}
	t := randomTime(r)
	return &t
}

func maybeAuthor(r *rand.Rand) *core.Author {
	if r.IntN(3) == 0 {
		return nil
	}
	return &core.Author{Kind: randomText(r), ID: randomText(r), Name: randomText(r)}
}

func randomWorkspace(r *rand.Rand) *core.Workspace {
	w := &core.Workspace{ID: randomText(r), ProviderID: randomText(r), ProjectID: randomText(r), Branch: randomText(r),
		BaseRef: randomText(r), State: core.WorkspaceState(randomText(r)), StatusCode: randomText(r), StatusDetail: randomText(r),
		HeadCommit: randomText(r), LastPush: []string{"", core.PushPushed, core.PushRefused}[r.IntN(3)], Origin: randomText(r), Title: randomText(r),
		StartedBy: maybeAuthor(r), Host: randomText(r), StartupPhase: randomText(r), RuntimeState: randomText(r),
		OpenMessages: r.IntN(2) == 0, LatestSeq: r.Int64N(core.MaxSafeInteger), LastTurnID: randomText(r),
		LastTurnOutcome: core.Outcome(randomText(r)), LastTurnCompletedAt: maybeTime(r), CreatedAt: randomTime(r), UpdatedAt: randomTime(r)}
	if r.IntN(2) == 0 {
		w.Pull = core.WorkspacePull{Number: r.Int64N(1e6) + 1, URL: randomText(r), State: randomText(r)}
	}
	return w
}

func randomMessage(r *rand.Rand) *core.Message {
	m := &core.Message{ID: randomText(r), Seq: r.Int64N(core.MaxSafeInteger), Role: randomText(r), Text: randomText(r),
		Status: core.MessageStatus(randomText(r)), TurnID: randomText(r), Outcome: core.Outcome(randomText(r)),
		CreatedAt: randomTime(r), DeliveredAt: maybeTime(r), Author: maybeAuthor(r)}
	for range r.IntN(3) {
		m.Assets = append(m.Assets, &core.Asset{ID: randomText(r), MimeType: randomText(r), OriginalName: randomText(r), SizeBytes: r.Int64N(1 << 40)})
	}
	return m
}

// TestHandWrittenAnswersAreMarshal holds each hand-written answer equal, byte for
// byte, to json.Marshal of its wire struct (the map List messages answered with
// before), for random values full of what JSON must escape.
func TestHandWrittenAnswersAreMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 2))
	for i := range 2000 {
		w := randomWorkspace(r)
		if got, want := string(appendWorkspace(nil, w)), marshal(t, toWorkspace(w)); got != want {
			t.Fatalf("workspace %d:\n got  %s\n want %s", i, got, want)
		}
		page := &core.MessagePage{LatestSeq: r.Int64N(core.MaxSafeInteger)}
		for range r.IntN(4) {
			page.Messages = append(page.Messages, randomMessage(r))
		}
		msgs := make([]messageJSON, len(page.Messages))
		for j, m := range page.Messages {
			msgs[j] = toMessage(m)
		}
		want := fiber.Map{"messages": msgs, "latestSeq": page.LatestSeq}
		if r.IntN(2) == 0 {
			f := &core.TurnFailure{TurnID: randomText(r), Agent: randomText(r), Code: randomText(r), Message: randomText(r)}
			page.TurnFailure = f
			want["turnFailure"] = turnFailureJSON{TurnID: f.TurnID, Agent: f.Agent, Code: f.Code, Message: f.Message}
		}
		if got, want := string(appendMessagePage(nil, page)), marshal(t, want); got != want {
			t.Fatalf("page %d:\n got  %s\n want %s", i, got, want)
		}
	}
}

// BenchmarkAppendString is a message page's texts' share of its answer: ordinary
// prose, which has almost nothing to escape.
func BenchmarkAppendString(b *testing.B) {
	text := strings.Repeat("A reply of ordinary length, with a few words to carry. ", 4)
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf = appendString(buf[:0], text)
	}
}
