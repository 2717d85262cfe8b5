package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Pull requests: after a workspace's branch reaches its project's repository, the hub
// opens a pull (merge) request from it to the base on the project's forge, when the
// project asks for one (PullRequestsDraft, PullRequestsReady) or a person did (Open
// pull request). Later pushes update its body. It is looked up by head branch before it
// is opened, so a retry or another replica adopts it rather than opening a second one.
// A forge's refusal is kept in words and shown; nothing is retried by itself.

// WorkspacePull is a workspace's pull request as the hub last saw it.
type WorkspacePull struct {
	// Number is the forge's number (0: none opened or found yet).
	Number int64
	URL    string
	// State is PullRequestOpen, PullRequestMerged or PullRequestClosed ("" none).
	State string
	// Error is the forge's last refusal, in words ("" when the last call succeeded).
	Error string
	// CheckedAt is when the hub last asked the forge.
	CheckedAt *time.Time
	// Requested: a person asked for one on a project whose pull requests are off.
	Requested bool
}

// PullRequestRef is a pull request as the status object and webhook events show it
// (the pullRequest extension).
type PullRequestRef struct {
	URL    string `json:"url"`
	Number int64  `json:"number"`
	State  string `json:"state"`
}

// Ref is the pull request as shown, nil when there is none.
func (p WorkspacePull) Ref() *PullRequestRef {
	if p.Number == 0 {
		return nil
	}
	return &PullRequestRef{URL: p.URL, Number: p.Number, State: p.State}
}

// PullQueries are the store statements of workspaces' pull requests.
type PullQueries interface {
	// SetWorkspacePull records what the forge answered (all of WorkspacePull but
	// Requested).
	SetWorkspacePull(ctx context.Context, workspaceID string, p WorkspacePull) error
	// RequestPull marks that a person asked for a pull request.
	RequestPull(ctx context.Context, workspaceID string) error
	// ClaimPullCheck takes the right to ask the forge for an open pull request's state
	// now, when nobody did since before (compare-and-set on the check time, so replicas
	// ask at most once per interval between them).
	ClaimPullCheck(ctx context.Context, workspaceID string, before, now time.Time) (bool, error)
}

// pullStore is what pull requests read and write.
type pullStore interface {
	GetProject(ctx context.Context, accountID, id string) (*Project, error)
	ListMessages(ctx context.Context, workspaceID string, afterSeq int64, limit int) ([]*StoredMessage, error)
	ChatThreadsOf(ctx context.Context, workspaceID string) ([]*ChatThread, error)
	PullQueries
}

// pullTimeout bounds one round of forge calls: a forge that does not answer must not
// hold a turn's record for long.
const pullTimeout = 30 * time.Second

// pullCheckEvery is how often an open pull request's state is asked for at most,
// per workspace, when the workspace is read.
const pullCheckEvery = time.Minute

// maxPullBody keeps a body under every forge's limit (GitHub's is 65,536 characters).
const maxPullBody = 60000

// pullRequests opens and refreshes workspaces' pull requests. It is shared by the
// worker (after a push) and the workspaces group (Open pull request, reads).
type pullRequests struct {
	kernel
	logger
	store  pullStore
	forges Forges
	// appURL is the hub's public URL, for the link to the workspace in the app ("":
	// no link).
	appURL string
	// checks bounds the state checks running in the background at once.
	checks chan struct{}
}

// maxPullChecks is how many pull request states a hub asks forges for at once; reads
// beyond it leave theirs to a later read.
const maxPullChecks = 4

// refreshSoon asks the forge for an open pull request's state in the background when
// no replica did for pullCheckEvery: the read answers with what the hub has, and a
// later one shows the forge's state.
func (pr pullRequests) refreshSoon(ws *Workspace) {
	if ws.Pull.State != PullRequestOpen || pr.checks == nil {
		return
	}
	if at := ws.Pull.CheckedAt; at != nil && pr.clock.Now().Sub(*at) < pullCheckEvery {
		return
	}
	select {
	case pr.checks <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-pr.checks }()
		ctx, cancel := context.WithTimeout(context.Background(), pullTimeout)
		defer cancel()
		if err := pr.refresh(ctx, ws); err != nil {
			pr.log().Warn("pull request state", "workspace", ws.ID, "err", err)
		}
	}()
}

// refresh reads the pull request's state from the forge, once per pullCheckEvery
// across replicas.
func (pr pullRequests) refresh(ctx context.Context, ws *Workspace) error {
	now := pr.clock.Now()
	if ok, err := pr.store.ClaimPullCheck(ctx, ws.ID, now.Add(-pullCheckEvery), now); err != nil || !ok {
		return err
	}
	p, err := pr.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	if err != nil {
		return err
	}
	if err := pr.openCredential(ctx, p); err != nil {
		return err
	}
	forge, err := pr.forge(p)
	if err != nil {
		return err
	}
	got, err := forge.GetPullRequest(ctx, p, ws.Pull.Number)
	pull := ws.Pull
	pull.CheckedAt = &now
	if err != nil {
		pull.Error = pullErrorWords(err)
	} else {
		pull.URL, pull.State, pull.Error = got.URL, got.State, ""
	}
	return pr.store.SetWorkspacePull(ctx, ws.ID, pull)
}

// wanted reports whether the workspace's pushes should open or update a pull request.
func wanted(ws *Workspace, p *Project) bool {
	return p.PullRequests == PullRequestsDraft || p.PullRequests == PullRequestsReady || ws.Pull.Requested || ws.Pull.Number > 0
}

// afterPush opens or updates the workspace's pull request after its branch reached the
// repository, and returns it with the line the reply gets ("" when none is wanted).
// The project's credential is open (forHub). It never fails the turn.
func (pr pullRequests) afterPush(ctx context.Context, ws *Workspace, p *Project) (*WorkspacePull, string) {
	if !wanted(ws, p) {
		return nil, ""
	}
	return pr.openNow(ctx, ws, p)
}

// offered reports whether a push of the workspace's branch may offer its threads an
// Open pull request button: the project's pull requests are off, and it has a forge
// this hub can reach.
func (pr pullRequests) offered(ws *Workspace, p *Project) bool {
	return !wanted(ws, p) && p.Forge != "" && pr.forges[p.Forge] != nil
}

// openNow opens or updates the pull request now (afterPush, or a person's ask).
func (pr pullRequests) openNow(ctx context.Context, ws *Workspace, p *Project) (*WorkspacePull, string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pullTimeout)
	defer cancel()
	pull, opened, err := pr.sync(ctx, ws, p)
	now := pr.clock.Now()
	pull.CheckedAt, pull.Requested = &now, ws.Pull.Requested
	if err != nil {
		pull.Error = pullErrorWords(err)
		pr.log().Warn("pull request", "workspace", ws.ID, "project", p.ID, "forge", p.Forge, "err", err)
		verb := "open"
		if pull.Number > 0 {
			verb = "update"
		}
		return &pull, fmt.Sprintf("Could not %s a pull request: %s", verb, pull.Error)
	}
	pull.Error = ""
	return &pull, pullNote(pull, opened)
}

// sync finds or opens the pull request and sets its body; opened says it is new here.
func (pr pullRequests) sync(ctx context.Context, ws *Workspace, p *Project) (WorkspacePull, bool, error) {
	pull := ws.Pull
	forge, err := pr.forge(p)
	if err != nil {
		return pull, false, err
	}
	title, body, err := pr.text(ctx, ws, p)
	if err != nil {
		return pull, false, err
	}
	var got *PullRequest
	opened := false
	if pull.Number > 0 && pull.State == PullRequestOpen {
		got, err = forge.UpdatePullRequest(ctx, p, pull.Number, "", body)
	} else {
		// None yet, or the last one is merged or closed: a newer one may have been
		// opened (by another replica, a retry, or by hand) since.
		got, err = forge.FindPullRequest(ctx, p, ws.Branch)
		switch {
		case errors.Is(err, ErrNoRows) && pull.Number > 0:
			return pull, false, nil // the merged or closed one stays the workspace's
		case errors.Is(err, ErrNoRows):
			got, err = forge.OpenPullRequest(ctx, p, PullRequestChange{Head: ws.Branch, Base: p.DefaultBranch,
				Title: title, Body: body, Draft: p.PullRequests == PullRequestsDraft})
			opened = err == nil
			var refusal *ForgeRefusal
			if errors.As(err, &refusal) {
				// Opened meanwhile (another replica's retry): adopt that one.
				if again, ferr := forge.FindPullRequest(ctx, p, ws.Branch); ferr == nil {
					got, err = again, nil
				}
			}
		case err == nil && got.State == PullRequestOpen && got.Number != pull.Number:
			got, err = forge.UpdatePullRequest(ctx, p, got.Number, "", body)
		}
	}
	if err != nil {
		return pull, false, err
	}
	pull.Number, pull.URL, pull.State = got.Number, got.URL, got.State
	return pull, opened, nil
}

// forge is the project's forge adapter, or why there is none.
func (pr pullRequests) forge(p *Project) (Forge, error) {
	if p.Forge == "" {
		return nil, &ForgeRefusal{Reason: "the project names no forge (wshub admin project update --forge github|gitlab|gitea)"}
	}
	f := pr.forges[p.Forge]
	if f == nil {
		return nil, &ForgeRefusal{Reason: "this hub has no client for the forge " + p.Forge}
	}
	return f, nil
}

// pullNote is the reply's line about the pull request.
func pullNote(pull WorkspacePull, opened bool) string {
	switch {
	case opened:
		return fmt.Sprintf("Opened pull request #%d: %s", pull.Number, pull.URL)
	case pull.State == PullRequestOpen:
		return fmt.Sprintf("Updated pull request #%d: %s", pull.Number, pull.URL)
	}
	return fmt.Sprintf("Pull request #%d is %s: %s", pull.Number, pull.State, pull.URL)
}

// pullErrorWords is a forge error as a person reads it: a refusal's own words, a
// timeout as such, anything else without internals.
func pullErrorWords(err error) string {
	var refusal *ForgeRefusal
	switch {
	case errors.As(err, &refusal):
		return oneLine(refusal.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return "the forge did not answer in time"
	}
	return oneLine(err.Error())
}

// oneLine keeps the first line of s, at most 300 characters.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// text is the pull request's title (the first prompt's first line) and body (the
// turns, with links to the workspace in the app and to its chat threads).
func (pr pullRequests) text(ctx context.Context, ws *Workspace, p *Project) (title, body string, err error) {
	msgs, err := pr.store.ListMessages(ctx, ws.ID, 0, maxPullTurns*2)
	if err != nil {
		return "", "", err
	}
	var turns []string
	for _, m := range msgs {
		if m.Role != RoleUser {
			continue
		}
		text, err := pr.open(m.SealedText, SealedMessageText.binding(ws.ID, m.ID))
		if err != nil {
			return "", "", err
		}
		line := firstLine(text)
		if title == "" {
			title = line
		}
		turns = append(turns, line)
	}
	title = cmp.Or(title, "wshub: "+ws.Branch)
	if r := []rune(title); len(r) > 200 {
		title = string(r[:200]) + "…"
	}
	threads, err := pr.store.ChatThreadsOf(ctx, ws.ID)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	b.WriteString("Opened by wshub from workspace `" + ws.ID + "`")
	if pr.appURL != "" {
		b.WriteString(" ([open in the app](" + strings.TrimRight(pr.appURL, "/") + "/app/workspaces/" + ws.ID + "))")
	}
	b.WriteString(".\n")
	for _, t := range threads {
		if link := ChatThreadLink(t.Place); link != "" {
			b.WriteString("Chat thread: " + link + "\n")
		}
	}
	b.WriteString("\n**Turns**\n\n")
	for i, t := range turns {
		fmt.Fprintf(&b, "%d. %s\n", i+1, markdownText(t))
	}
	if len(msgs) == maxPullTurns*2 {
		b.WriteString("\n(The first " + fmt.Sprint(maxPullTurns) + " turns; the workspace has more.)\n")
	}
	body = b.String()
	if r := []rune(body); len(r) > maxPullBody {
		body = string(r[:maxPullBody]) + "…"
	}
	return title, body, nil
}

// maxPullTurns is how many turns a body lists.
const maxPullTurns = 50

// firstLine is a prompt's first non-empty line, at most 200 characters.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// markdownText keeps a line of a person's text from being read as markup that links
// or mentions: it is shown as they wrote it.
func markdownText(s string) string {
	r := strings.NewReplacer("<", "&lt;", ">", "&gt;", "@", "@\u200b", "[", "\\[", "]", "\\]", "`", "'")
	return r.Replace(s)
}

// ChatThreadLink is a link to a chat thread, where the platform has one without asking
// its API ("" otherwise).
func ChatThreadLink(p ChatPlace) string {
	switch p.Platform {
	case PlatformDiscord:
		return "https://discord.com/channels/" + p.TeamID + "/" + cmp.Or(p.ThreadID, p.ChannelID)
	case PlatformSlack:
		return "https://app.slack.com/client/" + p.TeamID + "/" + p.ChannelID + "/thread/" + p.ChannelID + "-" + p.ThreadID
	}
	return ""
}
