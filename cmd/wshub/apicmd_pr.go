package main

// wshub ws pr: the Open pull request action from a shell or CI.

import (
	"context"
	"flag"
	"fmt"

	"github.com/wshub/wshub/client"
)

// exitPullPending: the pull request is asked for, and the branch's next push opens it.
const exitPullPending = 7

// wsPR opens (or finds) the pull request of a workspace, named by id or by its branch,
// and prints its URL alone on stdout, for a script to take.
func wsPR(ctx context.Context, e *apiEnv, fs *flag.FlagSet, args []string) int {
	branch := fs.String("branch", "", "the workspace's branch, instead of its id")
	pos, ok := positionals(fs, args)
	if !ok {
		return exitUsage
	}
	if (len(pos) == 1) == (*branch != "") || len(pos) > 1 {
		fmt.Fprintln(e.stderr, "name the workspace by its id or by --branch, one of them")
		return exitUsage
	}
	var id string
	if len(pos) == 1 {
		id = pos[0]
	} else {
		var err error
		if id, err = e.workspaceOnBranch(ctx, *branch); err != nil {
			return e.fail(err)
		}
	}
	ws, err := e.c.OpenPullRequest(ctx, id)
	if err != nil {
		return e.fail(err)
	}
	if e.json {
		e.printJSON(map[string]any{"workspace": ws})
	}
	if ws.PullRequest == nil {
		fmt.Fprintf(e.stderr, "asked for: the next push of %s opens the pull request\n", ws.Branch)
		return exitPullPending
	}
	if !e.json {
		fmt.Fprintln(e.stdout, ws.PullRequest.URL)
		if ws.PullRequest.State != "open" {
			fmt.Fprintf(e.stderr, "pull request #%d is %s\n", ws.PullRequest.Number, ws.PullRequest.State)
		}
	}
	return exitCompleted
}

// workspaceOnBranch is the id of the live workspace on branch (one at most: a branch
// is taken by one live workspace per project).
func (e *apiEnv) workspaceOnBranch(ctx context.Context, branch string) (string, error) {
	list, err := e.c.ListWorkspaces(ctx)
	if err != nil {
		return "", err
	}
	var found []client.Workspace
	for _, w := range list {
		if w.Branch == branch {
			found = append(found, w)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no workspace on branch %q", branch)
	case 1:
		return found[0].WorkspaceID, nil
	}
	return "", fmt.Errorf("%d workspaces on branch %q (in different projects): name one by id", len(found), branch)
}
