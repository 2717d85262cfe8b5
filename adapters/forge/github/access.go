package github

import (
	"context"
	"errors"
	"net/http"

	gh "github.com/google/go-github/v89/github"

	"github.com/wshub/wshub/core"
)

var _ core.ForgeAccess = (*Forge)(nil)

// CanWrite asks GitHub the user's permission on the repository: write (maintain
// included) or admin may. A user GitHub does not know may not.
func (f *Forge) CanWrite(ctx context.Context, p *core.Project, user core.ForgeUser) (bool, error) {
	c, r, err := f.client(ctx, p)
	if err != nil {
		return false, err
	}
	lvl, _, err := c.Repositories.GetPermissionLevel(ctx, r.owner, r.name, user.Login)
	var ge *gh.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, refusal(err, r)
	}
	switch lvl.GetPermission() {
	case "write", "admin":
		return true, nil
	}
	return false, nil
}
