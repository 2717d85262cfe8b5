package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

// recorder is a Wire that records its calls and fails those the test names. The
// platforms' own tests post to their fake servers; this one pins what Poster decides.
type recorder struct {
	calls []string
	fail  map[string]error // by call, as recorded
}

var (
	errLimited = errors.New("rate limited")
	errGone    = errors.New("no such message")
)

func (r *recorder) call(c string) error {
	r.calls = append(r.calls, c)
	return r.fail[c]
}

func (r *recorder) Post(_ context.Context, _ core.ChatPlace, text string) error {
	return r.call("post " + text)
}

func (r *recorder) Show(_ context.Context, _ core.ChatPlace, ref, text, stop string) (string, error) {
	if err := r.call(fmt.Sprintf("show %s %q stop=%s", ref, strings.SplitN(text, "\n", 2)[0], stop)); err != nil {
		return "", err
	}
	if ref == "" {
		ref = "m2"
	}
	return ref, nil
}

func (r *recorder) Ask(_ context.Context, _ core.ChatPlace, approvalID string, q Question) (string, error) {
	return "m1", r.call("ask " + approvalID + " file=" + q.FileName)
}

func (r *recorder) Offer(_ context.Context, _ core.ChatPlace, text, workspaceID string) (string, error) {
	return "m3", r.call("offer " + workspaceID + " " + text)
}

func (r *recorder) Failed(err error) (time.Duration, bool) {
	if err == errLimited {
		return time.Second, false
	}
	return 0, true
}

func (r *recorder) Gone(err error) bool { return err == errGone }

// filer is a recorder whose messages cannot carry a file (Slack's).
type filer struct{ *recorder }

func (f filer) PostFile(_ context.Context, _ core.ChatPlace, name string, _ []byte) error {
	return f.call("file " + name)
}

func poster(w Wire) Poster { return Poster{Words: Slack, Wire: w, MaxPost: 100, MaxQuestion: 100} }

func TestPosterPostsWhatIsLeftAndStopsAtAnError(t *testing.T) {
	w := &recorder{fail: map[string]error{}}
	text := strings.Repeat("word ", 30) // two posts of at most 100 runes
	parts := Split(text, 100)
	w.fail["post "+parts[1]] = errLimited
	res := poster(w).PostNotice(context.Background(), core.ChatNotice{Kind: core.NoticeText, Text: text})
	if res.PartsPosted != 1 || res.Done || res.RetryAfter != time.Second || len(w.calls) != 2 {
		t.Fatalf("expected part 1 out and the rate limit's wait, got %+v after %q", res, w.calls)
	}
	delete(w.fail, "post "+parts[1])
	w.calls = nil
	if res = poster(w).PostNotice(context.Background(), core.ChatNotice{Kind: core.NoticeText, Text: text, PartsPosted: 1}); !res.Done ||
		res.PartsPosted != 2 || len(w.calls) != 1 || w.calls[0] != "post "+parts[1] {
		t.Fatalf("expected only part 2 posted again, got %+v after %q", res, w.calls)
	}
}

func TestPosterStatusEditsInPlaceOrPostsAgainWhenGone(t *testing.T) {
	w := &recorder{fail: map[string]error{}}
	v := core.ChatStatusView{TurnID: "t1", MessageRef: "m1", Elapsed: time.Second}
	if ref, res := poster(w).PostStatus(context.Background(), v); ref != "m1" || !res.Done || w.calls[0] != `show m1 ":hourglass_flowing_sand: Working… 1s" stop=t1` {
		t.Fatalf("expected m1 edited with its Stop button, got %q %+v after %q", ref, res, w.calls)
	}
	w.calls, v.Finished = nil, true
	w.fail[`show m1 ":warning: Failed after 1s" stop=`] = errGone
	if ref, res := poster(w).PostStatus(context.Background(), v); ref != "m2" || !res.Done || len(w.calls) != 2 {
		t.Fatalf("expected a new message for the one gone, without buttons, got %q %+v after %q", ref, res, w.calls)
	}
}

func TestPosterApprovalIsOnePartOrTwoWhenTheFileGoesApart(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"command": strings.Repeat("x", 300)}) // too long for the question
	n := core.ChatNotice{Kind: core.NoticeApproval, ApprovalID: "apr_1", Tool: "Bash", Input: in}
	w := &recorder{fail: map[string]error{}}
	if res := poster(w).PostNotice(context.Background(), n); !res.Done || res.PartsPosted != 1 || res.Ref != "m1" ||
		len(w.calls) != 1 || !strings.HasPrefix(w.calls[0], "ask apr_1 file=") || w.calls[0] == "ask apr_1 file=" {
		t.Fatalf("expected one message carrying the file, got %+v after %q", res, w.calls)
	}

	f := filer{&recorder{fail: map[string]error{}}}
	f.fail["file "+strings.TrimPrefix(w.calls[0], "ask apr_1 file=")] = errLimited
	res := poster(f).PostNotice(context.Background(), n)
	if res.Done || res.PartsPosted != 1 || res.Ref != "m1" || len(f.calls) != 2 {
		t.Fatalf("expected the question out and the file to wait, got %+v after %q", res, f.calls)
	}
	f.fail, f.calls, n.PartsPosted = nil, nil, 1
	if res = poster(f).PostNotice(context.Background(), n); !res.Done || res.PartsPosted != 2 || len(f.calls) != 1 ||
		!strings.HasPrefix(f.calls[0], "file ") {
		t.Fatalf("expected only the file posted again, got %+v after %q", res, f.calls)
	}
}

func TestPosterDecisionOfAMessageGoneIsDone(t *testing.T) {
	const edit = `show m1 ":lock: The agent asks to run Bash:" stop=`
	w := &recorder{fail: map[string]error{edit: errGone}}
	in, _ := json.Marshal(map[string]string{"command": "ls"})
	res := poster(w).PostNotice(context.Background(), core.ChatNotice{Kind: core.NoticeApprovalDecided, MessageRef: "m1",
		Tool: "Bash", Input: in, Status: core.ApprovalAllowed, DecidedBy: "slack:U1"})
	if !res.Done || res.PartsPosted != 1 || len(w.calls) != 1 || w.calls[0] != edit {
		t.Fatalf("expected the decision done though its message is gone, got %+v after %q", res, w.calls)
	}
}
