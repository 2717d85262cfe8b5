package chat

import (
	"context"
	"errors"

	"github.com/wshub/wshub/core"
)

// FilesNotDownloaded is said when the platform will not give a message's files.
const FilesNotDownloaded = "I couldn't download the files of that message, so it wasn't taken. Send it again with them."

// Messages are core's use cases that make a person's message a workspace's.
type Messages interface {
	StartFromChat(ctx context.Context, sess *core.ChatSession, in core.ChatInput) (*core.Workspace, error)
	SendFromChat(ctx context.Context, sess *core.ChatSession, in core.ChatInput) (*core.SendReceipt, error)
}

// Take makes a person's message the workspace's, the one way every bot does it: more
// files than a message may carry are refused, the files are downloaded, and the
// thread's workspace is started with the message or sent it. A refusal (a file over
// the size limit, a download that failed for good, core's answer) is said in the
// session's place; an error that may pass (h.Retryable) is returned, for the inbox to
// retry the event. taken reports whether the message went to a workspace.
func (h *Handling) Take(ctx context.Context, svc Messages, sess *core.ChatSession, in core.ChatInput, files int,
	download func(context.Context) ([]core.ChatFile, error)) (taken bool, err error) {
	if h.TooManyFiles(sess.Place, files) {
		return false, nil
	}
	if in.Files, err = download(ctx); err != nil {
		var ce *core.Error
		if errors.As(err, &ce) || h.Retryable(err) {
			return false, h.Refuse(sess.Place, err)
		}
		// The platform refused the file for good (gone, no access): retrying will not
		// fetch it, and the person should know the message went nowhere.
		h.Log.Info("chat: a message's files not downloaded", "channel", sess.Place.ChannelID, "err", err)
		h.Say(sess.Place, FilesNotDownloaded)
		return false, nil
	}
	if sess.Thread == nil {
		_, err = svc.StartFromChat(ctx, sess, in)
	} else {
		_, err = svc.SendFromChat(ctx, sess, in)
	}
	if err != nil {
		return false, h.Refuse(sess.Place, err)
	}
	return true, nil
}
