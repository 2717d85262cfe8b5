package postgres

import (
	"database/sql"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// keyLimitsRow is a key's limits as stored: NULL is no limit.
type keyLimitsRow struct {
	Scopes    pq.StringArray `db:"scopes"`
	Projects  pq.StringArray `db:"project_ids"`
	ExpiresAt sql.NullTime   `db:"expires_at"`
}

// keyLimitsColumns are keyLimitsRow's columns, in dest's order.
const keyLimitsColumns = `k.scopes, k.project_ids, k.expires_at`

func (r *keyLimitsRow) dest() []any { return []any{&r.Scopes, &r.Projects, &r.ExpiresAt} }

func (r keyLimitsRow) core() core.KeyLimits {
	l := core.KeyLimits{ExpiresAt: timePtr(r.ExpiresAt)}
	if r.Scopes != nil {
		l.Scopes = make([]core.KeyScope, len(r.Scopes))
		for i, s := range r.Scopes {
			l.Scopes[i] = core.KeyScope(s)
		}
	}
	if r.Projects != nil {
		l.Projects = []string(r.Projects)
	}
	return l
}

// keyLimitsArgs are l's values for keyLimitsColumns: nil slices are NULL.
func keyLimitsArgs(l core.KeyLimits) []any {
	var scopes pq.StringArray
	if l.Scopes != nil {
		scopes = make(pq.StringArray, len(l.Scopes))
		for i, s := range l.Scopes {
			scopes[i] = string(s)
		}
	}
	var projects pq.StringArray
	if l.Projects != nil {
		projects = pq.StringArray(l.Projects)
	}
	return []any{scopes, projects, l.ExpiresAt}
}
