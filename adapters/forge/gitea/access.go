package gitea

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wshub/wshub/core"
)

var _ core.ForgeAccess = (*Forge)(nil)

// CanWrite asks Gitea the user's permission on the repository: write, admin or owner
// may. A user Gitea does not know, or who may not be asked about, may not.
func (f *Forge) CanWrite(ctx context.Context, p *core.Project, user core.ForgeUser) (bool, error) {
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return false, err
	}
	res, resp, err := c.CollaboratorPermission(r.owner, r.name, user.Login)
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden) {
			return false, nil
		}
		return false, refusal(ctx, r, token, fmt.Sprintf("read %s's permission on %s", user.Login, r), resp, err)
	}
	if res == nil {
		return false, nil
	}
	switch res.Permission {
	case "write", "admin", "owner":
		return true, nil
	}
	return false, nil
}
