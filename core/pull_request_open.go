package core

import "context"

// OpenPullRequest is the Open pull request action (API, CLI, chat, app): on a project
// whose pull requests are off, a person asks for one. When the branch has reached the
// repository it is opened now (or found, when one is open already); otherwise the
// workspace's next push opens it. The workspace is returned with its pull request.
func (s *Workspaces) OpenPullRequest(ctx context.Context, acct *Account, id string) (*Workspace, error) {
	ws, err := accountWorkspace(ctx, s.store, acct, id)
	if err != nil {
		return nil, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
	}
	p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	if err != nil {
		return nil, err
	}
	switch {
	case !p.Push:
		return nil, Errorf(CodePullRequestRefused, "the project does not push its branches, so there is no branch to open a pull request from (wshub admin project update --push)")
	case p.Forge == "":
		return nil, Errorf(CodePullRequestRefused, "the project names no forge (wshub admin project update --forge github|gitlab|gitea)")
	}
	if !ws.Pull.Requested {
		if err := s.store.RequestPull(ctx, ws.ID); err != nil {
			return nil, err
		}
		ws.Pull.Requested = true
	}
	if ws.LastPush != PushPushed {
		return ws, nil // the next push opens it
	}
	if err := s.pulls.openCredential(ctx, p); err != nil {
		return nil, err
	}
	pull, _ := s.pulls.openNow(ctx, ws, p)
	if err := s.store.SetWorkspacePull(context.WithoutCancel(ctx), ws.ID, *pull); err != nil {
		return nil, err
	}
	ws.Pull = *pull
	if pull.Error != "" {
		return ws, Errorf(CodePullRequestRefused, "%s", pull.Error)
	}
	return ws, nil
}
