package gitlab

import (
	"context"
	"errors"
	"net/http"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/wshub/wshub/core"
)

var _ core.ForgeAccess = (*Forge)(nil)

// CanWrite asks GitLab the user's membership of the project, inherited from its
// groups included: Developer or more may (they may push). Someone who is no member,
// and a user an event named without an id, may not.
func (f *Forge) CanWrite(ctx context.Context, p *core.Project, user core.ForgeUser) (bool, error) {
	if user.ID == 0 {
		return false, nil
	}
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return false, err
	}
	m, _, err := c.ProjectMembers.GetInheritedProjectMember(pr.path, user.ID, gl.WithContext(ctx))
	var ge *gl.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, refusal(err, pr)
	}
	return m.AccessLevel >= gl.DeveloperPermissions, nil
}
