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

// The wire structs below are the shapes jsonwrite.go writes by hand; json.Marshal of
// them is the reference its bytes must equal.

type workspaceJSON struct {
	WorkspaceID string `json:"workspaceId"`
	ProviderID  string `json:"providerId"`
	ProjectID   string `json:"projectId"`
	Branch      string `json:"branch"`
	BaseRef     string `json:"baseRef"`
	State       string `json:"state"`
	StatusCode  string `json:"statusCode"`
	// StatusDetail is an extension of api.md's object: why, in words, when the workspace
	// failed (git's reason for a failed checkout). Absent otherwise.
	StatusDetail string `json:"statusDetail,omitempty"`
	// HeadCommit and Pushed are extensions too: the last commit a turn left on the
	// branch, and whether the last push reached the project's repository (absent when
	// the project does not push, or before the first commit).
	HeadCommit string `json:"headCommit,omitempty"`
	Pushed     *bool  `json:"pushed,omitempty"`
	// Origin and StartedBy (extensions) say where it was started from, and by whom.
	Origin string `json:"origin,omitempty"`
	// Title (an extension) is the first line of the first prompt; absent before one.
	Title     string      `json:"title,omitempty"`
	StartedBy *authorJSON `json:"startedBy,omitempty"`
	// Host (an extension) is the host whose hub runs a local workspace, its checkout
	// on that host's disk; absent for remote providers and before a hub took it on.
	Host string `json:"host,omitempty"`
	// PullRequest (an extension) is the pull request of the branch on the project's
	// forge; absent before one is opened or found.
	PullRequest  *core.PullRequestRef `json:"pullRequest,omitempty"`
	StartupPhase string               `json:"startupPhase"`
	RuntimeState string               `json:"runtimeState"`
	AgentStatus  string               `json:"agentStatus"`
	LatestSeq    int64                `json:"latestSeq"`
	LastTurn     *lastTurnJSON        `json:"lastTurn,omitempty"`
	CreatedAt    int64                `json:"createdAt"`
	UpdatedAt    int64                `json:"updatedAt"`
}

type lastTurnJSON struct {
	TurnID      string `json:"turnId"`
	Outcome     string `json:"outcome"`
	CompletedAt int64  `json:"completedAt"`
}

func toWorkspace(w *core.Workspace) workspaceJSON {
	out := workspaceJSON{
		WorkspaceID: w.ID, ProviderID: w.ProviderID, ProjectID: w.ProjectID, Branch: w.Branch, BaseRef: w.BaseRef,
		State: string(w.State), StatusCode: w.StatusCode, StatusDetail: w.StatusDetail, HeadCommit: w.HeadCommit, Pushed: pushed(w.LastPush), StartupPhase: w.StartupPhase, RuntimeState: w.RuntimeState,
		AgentStatus: w.AgentStatus(), LatestSeq: w.LatestSeq, CreatedAt: ms(w.CreatedAt), UpdatedAt: ms(w.UpdatedAt),
		Origin: w.Origin, Title: w.Title, StartedBy: toAuthor(w.StartedBy), Host: w.Host, PullRequest: w.Pull.Ref(),
	}
	if lt := w.LastTurnInfo(); lt != nil {
		out.LastTurn = &lastTurnJSON{TurnID: lt.TurnID, Outcome: string(lt.Outcome), CompletedAt: ms(lt.CompletedAt)}
	}
	return out
}

type messageJSON struct {
	MessageID   string      `json:"messageId"`
	Seq         int64       `json:"seq"`
	Role        string      `json:"role"`
	Text        string      `json:"text"`
	Status      string      `json:"status"`
	TurnID      string      `json:"turnId,omitempty"`
	Outcome     string      `json:"outcome,omitempty"`
	CreatedAt   int64       `json:"createdAt"`
	DeliveredAt *int64      `json:"deliveredAt,omitempty"`
	Attachments []assetJSON `json:"attachments,omitempty"`
	// Author (an extension) is who wrote a user message.
	Author *authorJSON `json:"author,omitempty"`
}

func toMessage(m *core.Message) messageJSON {
	out := messageJSON{MessageID: m.ID, Seq: m.Seq, Role: m.Role, Text: m.Text, Status: string(m.Status), TurnID: m.TurnID,
		Outcome: string(m.Outcome), CreatedAt: ms(m.CreatedAt), Author: toAuthor(m.Author)}
	if m.DeliveredAt != nil {
		d := ms(*m.DeliveredAt)
		out.DeliveredAt = &d
	}
	for _, a := range m.Assets {
		out.Attachments = append(out.Attachments, toAsset(a))
	}
	return out
}

type turnFailureJSON struct {
	TurnID  string `json:"turnId"`
	Agent   string `json:"agent"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

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
