package core

import (
	"context"
	"errors"
)

// errThreadTaken: another first message of the same thread created its workspace
// first; this one becomes a message of that workspace.
var errThreadTaken = errors.New("chat thread already has a workspace")

// StartFromChat starts a workspace for a thread whose first message is in. The thread
// is recorded in the workspace's own transaction, so the first reply finds it. With
// files, the workspace starts idle, the files are uploaded, and the message follows
// with them attached. Every step is keyed by in.Key, so a redelivered event repeats
// nothing.
func (s *Chat) StartFromChat(ctx context.Context, sess *ChatSession, in ChatInput) (*Workspace, error) {
	b := sess.Binding
	create := CreateWorkspaceInput{HeaderKey: &in.Key, Origin: sess.Place.Platform}
	if p := firstNonEmpty(sess.ChannelProject, b.ProjectID); p != "" {
		create.ProjectID = &p
	}
	if in.Project != "" {
		p, err := s.findProject(ctx, sess.Account.ID, in.Project)
		if err != nil {
			return nil, err
		}
		create.ProjectID = &p.ID
	}
	if b.RuntimeMode != "" {
		create.RuntimeMode = &b.RuntimeMode
	}
	if b.ProviderID != "" {
		create.ProviderID = &b.ProviderID
	}
	if b.Agent != "" {
		create.Agent, create.Model = &b.Agent, &b.Model
	}
	if in.Agent != "" {
		create.Agent = &in.Agent
	}
	if in.Model != "" {
		create.Model = &in.Model
	}
	if len(in.Files) == 0 {
		create.Prompt = &in.Text
	}
	thread := &ChatThread{Place: sess.Place, CreatedAt: s.clock.Now()}
	create.thread, create.author = thread, in.author(sess.Place)
	ws, _, err := s.workspaces.CreateWorkspace(ctx, sess.Account, create)
	if errors.Is(err, errThreadTaken) {
		if sess.Thread, err = s.store.GetChatThread(ctx, sess.Place); err != nil {
			return nil, err
		}
		_, err = s.SendFromChat(ctx, sess, in)
		if err != nil {
			return nil, err
		}
		return s.workspaces.GetWorkspace(ctx, sess.Account, sess.Thread.WorkspaceID)
	}
	if err != nil {
		return nil, err
	}
	if sess.Thread, err = s.store.GetChatThread(ctx, sess.Place); err != nil {
		return nil, err
	}
	if len(in.Files) > 0 {
		if _, err := s.SendFromChat(ctx, sess, in); err != nil {
			return ws, err
		}
	}
	return ws, nil
}

// SendFromChat sends a thread message (with its files) to the thread's workspace.
func (s *Chat) SendFromChat(ctx context.Context, sess *ChatSession, in ChatInput) (*SendReceipt, error) {
	if sess.Thread == nil {
		return nil, Errorf(CodeChatNoWorkspace, "this thread has no workspace")
	}
	ids := make([]string, 0, len(in.Files))
	for _, f := range in.Files {
		key := in.Key + ":file:" + f.ID
		name := f.Name
		a, err := s.workspaces.UploadAttachment(ctx, sess.Account, sess.Thread.WorkspaceID, UploadInput{
			ContentType: f.MimeType, FileName: &name, HeaderKey: &key, Body: f.Data,
		})
		if err != nil {
			return nil, err
		}
		ids = append(ids, a.ID)
	}
	text := in.Text
	return s.workspaces.SendMessage(ctx, sess.Account, sess.Thread.WorkspaceID, SendMessageInput{Text: &text, Attachments: ids,
		HeaderKey: &in.Key, author: in.author(sess.Place)})
}

// author is the chat user who wrote the input (nil when the bot did not say).
func (in ChatInput) author(place ChatPlace) *Author {
	if in.UserID == "" {
		return nil
	}
	a := chatAuthor(place, in.UserID, in.UserName, in.UserURL)
	return &a
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
