package slack

import (
	"context"
	"sync"
	"time"
)

// Every message and button press records its author's name. A users.info call for
// each would cost a round trip per message, so names are remembered for a while: a
// renamed person shows the new name within nameTTL.
const (
	nameTTL  = 10 * time.Minute
	maxNames = 4096
)

type cachedName struct {
	name  string
	until time.Time
}

// names is the bot's memory of its team's display names.
type names struct {
	mu sync.Mutex
	m  map[string]cachedName
}

// userName is the person's display name in Slack: their profile's display name, else
// their full name, else their handle. "" when Slack cannot say (core then records the
// user id): a name is not worth failing or retrying a message for.
func (b *Bot) userName(ctx context.Context, userID string) string {
	now := time.Now()
	b.names.mu.Lock()
	c, ok := b.names.m[userID]
	b.names.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.name
	}
	u, err := b.api.GetUserInfoContext(ctx, userID)
	if err != nil {
		b.log.Debug("slack users.info", "user", userID, "err", err)
		return ""
	}
	name := u.Profile.DisplayName
	for _, alt := range []string{u.RealName, u.Profile.RealName, u.Name} {
		if name == "" {
			name = alt
		}
	}
	b.names.mu.Lock()
	defer b.names.mu.Unlock()
	if b.names.m == nil || len(b.names.m) >= maxNames {
		b.names.m = make(map[string]cachedName) // cheaper than an LRU, and rare
	}
	b.names.m[userID] = cachedName{name: name, until: now.Add(nameTTL)}
	return name
}
