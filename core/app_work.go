package core

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// The work section of a workspace's page: what its branch holds (its commits and a
// diffstat: the diff's summary, kept like its pages), how its last push went, and the
// end of its environment's setup output. Reading it must stay cheap, as the page is
// read often (on each of a running turn's events): a summary kept for what the store
// last recorded is shown without running git.

// WorkSummary is the branch as the work section tells it.
type WorkSummary struct {
	// Diff is the branch's summary: its files counted, its commits named, no patch
	// (a BranchDiff of page 0). Nil when it could not be read now; Unread says why.
	Diff   *BranchDiff
	Unread string
}

// MoreCommits is how many of the branch's commits are not named.
func (d *BranchDiff) MoreCommits() int { return max(0, d.CommitCount-len(d.Commits)) }

// ScriptLog is the newest run of the environment's setup or update script as the
// work section shows it: the end of its output, and how it ended.
type ScriptLog struct {
	// Name is ScriptSetup or ScriptUpdate.
	Name string
	// Tail is the end of its output (at most setupLogLines lines); Cut says earlier
	// lines are not shown.
	Tail string
	Cut  bool
	// Outcome is how it ended ("": it has not).
	Outcome Outcome
}

// setupLogLines bounds the setup output the work section shows.
const setupLogLines = 40

// maxWorkTips bounds the workspaces whose summary tips one replica remembers; past it
// they are forgotten together, and the next views read git once more.
const maxWorkTips = 10000

// workTips remembers, for each workspace, the DiffTips of its summary with what the
// store had recorded when it was made (its head commit and last turn), so that a view
// of the same record finds the kept summary without asking git what the tips are.
type workTips struct {
	mu   sync.Mutex
	tips map[string]headTips // by workspace id
	// counting holds the workspaces being counted: one count at a time each.
	counting map[string]bool
}

// startCount takes the workspace's count; false when one is running already.
func (w *workTips) startCount(workspace string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counting[workspace] {
		return false
	}
	if w.counting == nil {
		w.counting = map[string]bool{}
	}
	w.counting[workspace] = true
	return true
}

func (w *workTips) endCount(workspace string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.counting, workspace)
}

type headTips struct {
	seen string
	tips DiffTips
}

func (w *workTips) get(workspace, seen string) (DiffTips, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.tips[workspace]
	return t.tips, ok && t.seen == seen
}

func (w *workTips) put(workspace, seen string, tips DiffTips) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tips == nil || len(w.tips) >= maxWorkTips {
		w.tips = map[string]headTips{}
	}
	w.tips[workspace] = headTips{seen: seen, tips: tips}
}

// work reads the summary of the workspace's branch. Fail open: a summary that cannot
// be read is said in words, and the page shows the rest.
func (s *AppWorkspaces) work(ctx context.Context, ws *Workspace) WorkSummary {
	if s.diffs == nil {
		return WorkSummary{Unread: "This hub does not read branches."}
	}
	remote := ws.ProviderID != LocalProviderID
	seen := ws.HeadCommit + " " + ws.LastTurnID
	if tips, ok := s.workTips.get(ws.ID, seen); ok {
		if d := s.diffCache.get(ctx, diffKey{workspace: ws.ID, remote: remote, tips: tips}); d != nil {
			return WorkSummary{Diff: d}
		}
	}
	if !s.workTips.startCount(ws.ID) {
		return WorkSummary{Unread: countingNote}
	}
	done := make(chan WorkSummary, 1)
	// The count is the diff's (its deadline, its places per account) and is kept when
	// it ends: it goes on after the page has stopped waiting for it.
	go func() {
		defer s.workTips.endCount(ws.ID)
		done <- s.count(context.WithoutCancel(ctx), ws, remote, seen)
	}()
	wait, cancel := context.WithTimeout(ctx, workWait)
	defer cancel()
	select {
	case w := <-done:
		return w
	case <-wait.Done():
		return WorkSummary{Unread: countingNote}
	}
}

// workWait bounds how long a page waits for its branch to be counted: a page the live
// updates draw again and again is not held by a large branch.
const workWait = 2 * time.Second

const countingNote = "The branch is being counted: the next view of the page shows it."

// count computes the summary of the workspace's branch and remembers its tips under
// seen.
func (s *AppWorkspaces) count(ctx context.Context, ws *Workspace, remote bool, seen string) WorkSummary {
	if remote && s.branches != nil {
		sync, cancel := context.WithTimeout(ctx, s.diffLimits.timeout())
		s.syncBranch(sync, ws)
		cancel()
	}
	d, tips, err := s.diffOf(ctx, ws, remote, 0)
	switch {
	case ErrorCode(err) == CodeRateLimited:
		return WorkSummary{Unread: "The hub is busy computing other changes of this account; the summary shows when the page is read again."}
	case err != nil:
		s.log().Warn("read the summary of a branch", "workspace", ws.ID, "err", err)
		return WorkSummary{Unread: "The branch could not be read just now."}
	}
	// What the store last recorded (the head a turn left, and the turn) is what the
	// next view compares: a summary is found again until a turn ends. A branch ahead of
	// its recorded head (the agent committed, in a turn still running) is read again.
	if !tips.NoCopy && (ws.HeadCommit == "" || tips.Head == ws.HeadCommit) {
		s.workTips.put(ws.ID, seen, tips)
	}
	return WorkSummary{Diff: d}
}

// pushRefusal is the reason of the workspace's refused push, as the newest reply that
// tells one says it (pushOutcome), "" when none of msgs does.
func pushRefusal(msgs []*Message, branch string) string {
	lead := "\n\n---\nPush to `" + branch + "` refused: "
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleAssistant {
			continue
		}
		if at := strings.LastIndex(msgs[i].Text, lead); at >= 0 {
			return strings.TrimSpace(msgs[i].Text[at+len(lead):])
		}
	}
	return ""
}

// setupLog is the newest run of the environment's scripts among events, or, when the
// workspace was set up with a script whose output is older than them, its setup's
// (the first events of the workspace). Nil: there is none to show.
func (s *AppWorkspaces) setupLog(ctx context.Context, acct *Account, ws *Workspace, events []*TurnEvent) (*ScriptLog, error) {
	run := newestScriptRun(events)
	if len(run) == 0 && ws.EventSeq > stepsShown {
		b, err := s.store.WorkspaceEnvironment(ctx, ws.ID)
		if err != nil {
			return nil, err
		}
		var kept keptEnvironment
		if len(b) == 0 || json.Unmarshal(b, &kept) != nil || kept.Setup == "" {
			return nil, nil
		}
		first, err := s.workspaces.ListTurnEvents(ctx, acct, ws.ID, 0, stepsShown)
		if err != nil {
			return nil, err
		}
		run = newestScriptRun(first)
	}
	if len(run) == 0 {
		return nil, nil
	}
	log := &ScriptLog{Name: ScriptSetup}
	var lines []string
	for _, e := range run {
		switch e.Type {
		case EventSetupOutput:
			if e.Tool != "" {
				log.Name = e.Tool
			}
			lines = append(lines, strings.TrimSuffix(e.Delta, "\n"))
		case EventSetupFinished:
			log.Outcome = e.Outcome
		}
	}
	if len(lines) > setupLogLines {
		lines, log.Cut = lines[len(lines)-setupLogLines:], true
	}
	log.Tail = strings.Join(lines, "\n")
	return log, nil
}
