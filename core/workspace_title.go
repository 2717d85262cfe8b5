package core

import (
	"context"
	"strings"
	"unicode"
)

// maxTitleRunes bounds a workspace's title: a line of a list, not a paragraph.
const maxTitleRunes = 80

// TitleFrom is the title a text gives a workspace: its first line with words in it,
// spaces folded, cut to maxTitleRunes with an ellipsis ("" when it has none).
func TitleFrom(text string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if t := strings.Join(strings.FieldsFunc(line, unicode.IsSpace), " "); t != "" {
			return truncateRunes(t, maxTitleRunes)
		}
	}
	return ""
}

// sealTitle gives ws its title from text, sealed (nothing when text has no words).
func (s kernel) sealTitle(ws *Workspace, text string) error {
	title := TitleFrom(text)
	if title == "" {
		return nil
	}
	sealed, err := s.seal([]byte(title), SealedWorkspaceTitle.binding(ws.AccountID, ws.ID))
	if err != nil {
		return err
	}
	ws.Title, ws.TitleSealed = title, sealed
	return nil
}

// titleFirst gives a workspace that has none yet its title from its first message.
func (s kernel) titleFirst(ctx context.Context, q WorkspaceQueries, ws *Workspace, text string) error {
	if ws.TitleSealed != nil {
		return nil
	}
	if err := s.sealTitle(ws, text); err != nil || ws.TitleSealed == nil {
		return err
	}
	return q.SetWorkspaceTitle(ctx, ws.ID, ws.TitleSealed)
}

// withTitles opens the titles of workspaces about to be shown. A title that does not
// open (a key taken away) is left out: the workspace is named by its id, as one
// without a title is.
func (s kernel) withTitles(list ...*Workspace) {
	for _, ws := range list {
		if ws == nil || ws.TitleSealed == nil || ws.Title != "" {
			continue
		}
		if t, err := s.open(ws.TitleSealed, SealedWorkspaceTitle.binding(ws.AccountID, ws.ID)); err == nil {
			ws.Title = t
		}
	}
}

// Name is how people see the workspace named: its title, or its id without one.
func (w *Workspace) Name() string {
	if w.Title != "" {
		return w.Title
	}
	return w.ID
}
