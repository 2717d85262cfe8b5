package core

import (
	"context"
	"errors"
	"strings"
)

// A failed check on the head commit of a workspace's pull request (a GitHub check run
// or commit status, a GitLab pipeline, a Gitea commit status) is the workspace's
// follow-up, at most the project's FixChecks times per pull request: past that the
// hub says so once and takes no more. A check on an older commit is stale (a later
// push is being checked) and taken for nothing.

// MaxFixChecks bounds --fix-checks: a loop of fixes past a few is a person's to stop.
const MaxFixChecks = 100

// forgeCheckLimitKey is the key under which the limit said is recorded; check keys
// are "run:" or "status:" and an id, never this.
const forgeCheckLimitKey = "limit"

// CheckFix is what a failed check becomes.
type CheckFix int

const (
	// CheckFixNone: nothing (fixes off, taken before, or the limit said before).
	CheckFixNone CheckFix = iota
	// CheckFixSend: the workspace's follow-up; RecordCheckFix once it is sent.
	CheckFixSend
	// CheckFixLimit: the limit is reached; say so, then RecordCheckLimit.
	CheckFixLimit
)

// PullOfCheck is the pull request whose head commit sha is, of a workspace of the
// project whose events arrive at place (its TeamID; 0: none, or sha is not its head
// any more).
func (s *ForgeEvents) PullOfCheck(ctx context.Context, place ChatPlace, sha string) (int64, error) {
	sha = strings.ToLower(strings.TrimSpace(sha))
	if sha == "" {
		return 0, nil
	}
	n, err := s.store.PullOfCommit(ctx, place.TeamID, sha)
	if errors.Is(err, ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// CheckFixOf decides what the failed check of key on the session's pull request
// becomes. Nothing is recorded: a fix is recorded once it is sent (its message is
// idempotent by key, so a retry in between sends it once).
func (s *ForgeEvents) CheckFixOf(ctx context.Context, sess *ForgeSession, pull int64, key string) (CheckFix, error) {
	if sess.FixChecks <= 0 {
		return CheckFixNone, nil
	}
	taken, err := s.store.ForgeCheckFixes(ctx, sess.Binding.ProjectID, pull)
	if err != nil {
		return CheckFixNone, err
	}
	if _, seen := taken[key]; seen {
		return CheckFixNone, nil
	}
	fixes := 0
	for _, fix := range taken {
		if fix {
			fixes++
		}
	}
	switch _, said := taken[forgeCheckLimitKey]; {
	case fixes < sess.FixChecks:
		return CheckFixSend, nil
	case said:
		return CheckFixNone, nil
	}
	return CheckFixLimit, nil
}

// RecordCheckFix records the fix of key sent on the session's pull request.
func (s *ForgeEvents) RecordCheckFix(ctx context.Context, sess *ForgeSession, pull int64, key string) error {
	return s.store.AddForgeCheckFix(ctx, sess.Binding.ProjectID, pull, key, true, s.clock.Now())
}

// RecordCheckLimit records that the limit of the session's pull request was said.
func (s *ForgeEvents) RecordCheckLimit(ctx context.Context, sess *ForgeSession, pull int64) error {
	return s.store.AddForgeCheckFix(ctx, sess.Binding.ProjectID, pull, forgeCheckLimitKey, false, s.clock.Now())
}
