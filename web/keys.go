package web

import (
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// keyExpiryLayout is the form's expiry field (datetime-local), read as UTC: the page
// says so beside the field.
const keyExpiryLayout = "2006-01-02T15:04"

// keyForm reads the key form: a name, the scopes and projects ticked (none: full
// access) and an optional expiry.
func keyForm(c *fiber.Ctx) (core.NewKeyInput, error) {
	in := core.NewKeyInput{Name: c.FormValue("name"), Scopes: formList(c, "scopes"), Projects: formList(c, "projects")}
	if v := strings.TrimSpace(c.FormValue("expires")); v != "" {
		t, err := time.ParseInLocation(keyExpiryLayout, v, time.UTC)
		if err != nil {
			return in, core.Errorf(core.CodeInvalidRequest, "the expiry %q is not a date and time", v)
		}
		in.ExpiresAt = &t
	}
	return in, nil
}

// formList joins a form field's values, as the CLI takes them.
func formList(c *fiber.Ctx, name string) string {
	var vals []string
	for _, v := range c.Request().PostArgs().PeekMulti(name) {
		vals = append(vals, string(v))
	}
	return strings.Join(vals, ",")
}

// ProjectNames names a key's projects for its row ("all" when it has no limit).
func (d keysData) ProjectNames(ids []string) string {
	if ids == nil {
		return "all"
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id
		for _, p := range d.Projects {
			if p.ID == id {
				names[i] = p.DisplayName
			}
		}
	}
	return strings.Join(names, ", ")
}

// ScopeNames lists a key's scopes ("all" when it has no limit).
func (keysData) ScopeNames(scopes []core.KeyScope) string {
	if scopes == nil {
		return "all"
	}
	return core.JoinKeyScopes(scopes)
}
