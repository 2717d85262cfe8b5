package core

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Only people who may write to a project's repository start or drive work from its
// forge: anyone can comment on a public repository. The forge is asked, and its answer
// kept briefly, so a busy issue does not ask it for every comment.

// forgeAccessFor is how long a forge's answer about a person is kept.
const forgeAccessFor = time.Minute

// ForgeUser is a person on a forge as an event names them.
type ForgeUser struct {
	Login string
	// ID is the forge's number for them (GitLab addresses members by it).
	ID int64
}

// ForgeAccess reads who may write to a project's repository; a forge adapter that is
// not one lets no one start work from events.
type ForgeAccess interface {
	// CanWrite reports whether user may push to p's repository (write, maintain or
	// admin on GitHub and Gitea; Developer or more on GitLab).
	CanWrite(ctx context.Context, p *Project, user ForgeUser) (bool, error)
}

// forgeAccessCache keeps the forges' answers by project and login.
type forgeAccessCache struct {
	mu      sync.Mutex
	answers map[string]forgeAnswer
}

type forgeAnswer struct {
	may   bool
	until time.Time
}

// MayTrigger reports whether the author of an event in a forge thread may start or
// drive work there: whether they may write to the project's repository.
func (s *ForgeEvents) MayTrigger(ctx context.Context, place ChatPlace, user ForgeUser) (bool, error) {
	key := place.TeamID + "\x00" + user.Login
	now := s.clock.Now()
	s.access.mu.Lock()
	a, ok := s.access.answers[key]
	s.access.mu.Unlock()
	if ok && now.Before(a.until) {
		return a.may, nil
	}
	p, err := s.store.GetProjectByID(ctx, place.TeamID)
	if err != nil {
		return false, notFound(err, CodeProjectNotFound, "no such project")
	}
	access, ok := s.forges[place.Platform].(ForgeAccess)
	if !ok {
		return false, fmt.Errorf("forge %q cannot say who may write", place.Platform)
	}
	if err := s.openCredential(ctx, p); err != nil {
		return false, err
	}
	may, err := access.CanWrite(ctx, p, user)
	if err != nil {
		return false, err
	}
	s.access.mu.Lock()
	defer s.access.mu.Unlock()
	if s.access.answers == nil || len(s.access.answers) > maxForgeAnswers {
		s.access.answers = map[string]forgeAnswer{} // a bound, not an eviction policy: answers are a minute's
	}
	s.access.answers[key] = forgeAnswer{may: may, until: now.Add(forgeAccessFor)}
	return may, nil
}

// maxForgeAnswers bounds the answers kept.
const maxForgeAnswers = 10_000
