package core

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
)

// SendMessageInput is what a caller sent to a workspace. Nil means absent.
type SendMessageInput struct {
	Text        *string
	Attachments []string
	HeaderKey   *string
	BodyKey     *string
	// author wrote it (nil: the request's API key).
	author *Author
}

type sendRequest struct {
	Text        string   `json:"text"`
	Attachments []string `json:"attachments"`
}

// sendResult is the part of a receipt a replay cannot re-read from the message.
type sendResult struct {
	ResumeTriggered bool `json:"resumeTriggered"`
}

// ValidateSend checks a send request (the 400s) without the store.
func ValidateSend(in SendMessageInput) (sendRequest, string, error) {
	var r sendRequest
	key, err := IdempotencyKey(in.HeaderKey, in.BodyKey)
	if err != nil {
		return r, "", err
	}
	if in.Text == nil {
		return r, "", Errorf(CodeInvalidRequest, "text is required")
	}
	r.Text = cleanText(*in.Text)
	if chars(r.Text) > MaxTextChars {
		return r, "", Errorf(CodeInvalidMessage, "text must be at most 65536 characters")
	}
	for _, id := range in.Attachments {
		if !ValidID(id, PrefixAsset) {
			return r, "", Errorf(CodeInvalidAssetID, "%q is not an asset id", truncateRunes(id, 64))
		}
		if !slices.Contains(r.Attachments, id) { // duplicates count once
			r.Attachments = append(r.Attachments, id)
		}
	}
	if len(r.Attachments) > MaxAttachments {
		return r, "", Errorf(CodeInvalidMessage, "a message carries at most 8 attachments")
	}
	if r.Text == "" && len(r.Attachments) == 0 {
		return r, "", Errorf(CodeInvalidMessage, "text may be empty only when attachments are sent")
	}
	return r, key, nil
}

// SendMessage queues a user message for the workspace's agent, resuming a paused
// workspace. The seq allocation, the message and the receipt are one transaction.
func (s *Workspaces) SendMessage(ctx context.Context, acct *Account, workspaceID string, in SendMessageInput) (*SendReceipt, error) {
	req, key, err := ValidateSend(in)
	if err != nil {
		return nil, err
	}
	var receipt *SendReceipt
	err = inTx(ctx, s.store, func(q Queries) (err error) {
		receipt, err = s.sendIn(ctx, q, acct, workspaceID, req, key, authorOf(acct, in.author))
		return err
	})
	return receipt, err
}

// sendIn is SendMessage's transaction: also run inside a schedule's, which records the
// run in the same commit.
func (s *Workspaces) sendIn(ctx context.Context, q Queries, acct *Account, workspaceID string, req sendRequest, key string,
	author *Author) (*SendReceipt, error) {
	var receipt *SendReceipt
	err := func() error {
		ws, err := lockAccountWorkspace(ctx, q, acct, workspaceID)
		if err != nil {
			return contended(notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account"))
		}
		var claim *Receipt
		if key != "" {
			claim = &Receipt{
				AccountID: acct.ID, Scope: scopeSend(ws.ID), Key: key, Fingerprint: fingerprint(req),
				ResourceID: DerivedID(PrefixMessage, acct.ID, scopeSend(ws.ID), key), CreatedAt: s.clock.Now(),
			}
			stored, replay, err := claimKey(ctx, q, claim, CodeIdempotencyKeyReused, "message",
				func(id string) error { return errOf(q.GetMessage(ctx, ws.ID, id)) })
			if err != nil {
				return err
			}
			if replay {
				receipt, err = replaySend(ctx, q, ws.ID, stored)
				return err
			}
		}
		if len(req.Attachments) > 0 {
			found, err := q.AssetsByID(ctx, ws.ID, req.Attachments)
			if err != nil {
				return err
			}
			if len(found) != len(req.Attachments) {
				return Errorf(CodeAssetNotFound, "an attachment is not an asset of this workspace")
			}
		}
		if !ws.AcceptsMessages() {
			return Errorf(CodeWorkspaceNotAcceptingMessages, "the workspace is %s and takes no messages", ws.State)
		}
		if err := acct.checkBilling(s.clock.Now()); err != nil {
			return err
		}
		resumed := false
		if ws.State == StatePaused {
			if resumed, err = setState(ctx, q, ws.ID, StatePaused, changeTo(StateResuming, "", s.clock.Now())); err != nil {
				return err
			}
		}
		var preset string
		if claim != nil {
			preset = claim.ResourceID
		}
		// The open-message quota is held by the insert itself (one statement fewer per
		// send); a refusal rolls back what came before it, the resume included.
		m, err := s.appendUserMessage(ctx, q, ws, preset, req.Text, req.Attachments, author,
			s.quotas.openMessages(acct))
		if errors.Is(err, errOpenMessagesFull) {
			return s.quotas.messageQuotaRefusal(ctx, q, acct, ws.ID)
		}
		if err != nil {
			return err
		}
		if claim != nil {
			claim.Result, _ = json.Marshal(sendResult{ResumeTriggered: resumed})
			if err := q.SetReceiptResult(ctx, claim); err != nil {
				return err
			}
		}
		receipt = &SendReceipt{MessageID: m.ID, Seq: m.Seq, Status: "queued", ResumeTriggered: resumed}
		return wake(ctx, q, WorkChannel, ws.ID) // wake the worker for the turn (or the resume)
	}()
	return receipt, err
}

// replaySend answers a send replayed with its key from the message it made.
func replaySend(ctx context.Context, q Queries, workspaceID string, stored *Receipt) (*SendReceipt, error) {
	m, err := q.GetMessage(ctx, workspaceID, stored.ResourceID)
	if err != nil {
		return nil, err
	}
	if m.Status == MessageExpired || m.Status == MessageFailed {
		return nil, Errorf(CodeMessageNotDeliverable, "the message sent with this key is %s", m.Status)
	}
	var res sendResult
	if len(stored.Result) > 0 {
		if err := json.Unmarshal(stored.Result, &res); err != nil {
			return nil, err
		}
	}
	return &SendReceipt{MessageID: m.ID, Seq: m.Seq, Status: receiptStatus(m.Status), ResumeTriggered: res.ResumeTriggered}, nil
}

// receiptStatus is queued while the message is pending, delivered afterwards.
func receiptStatus(messageStatus MessageStatus) string {
	if messageStatus == MessagePending {
		return "queued"
	}
	return "delivered"
}

// errOpenMessagesFull: appendUserMessage inserted nothing, the workspace holding its
// maxOpen open messages already.
var errOpenMessagesFull = errors.New("open messages at their quota")

// appendUserMessage writes a pending user message with the next seq; id may be preset
// (derived from an idempotency key) or "" for a new one. maxOpen > 0 refuses it
// (errOpenMessagesFull) when the workspace already holds that many open messages.
func (s *Workspaces) appendUserMessage(ctx context.Context, q Queries, ws *Workspace, id, text string, assets []string, author *Author, maxOpen int) (*Message, error) {
	if id == "" {
		id = NewID(s.rand, PrefixMessage)
	}
	sealed, err := s.seal([]byte(text), SealedMessageText.binding(ws.ID, id))
	if err != nil {
		return nil, err
	}
	m := &Message{
		ID: id, WorkspaceID: ws.ID, Role: RoleUser, Text: text, Status: MessagePending,
		TurnID: TurnIDFor(id), CreatedAt: s.clock.Now(), AssetIDs: assets, Author: author,
	}
	if inserted, err := q.InsertMessage(ctx, m, sealed, maxOpen); err != nil { // sets m.Seq
		return nil, err
	} else if !inserted {
		return nil, errOpenMessagesFull
	}
	ws.LatestSeq = m.Seq
	if err := s.titleFirst(ctx, q, ws, text); err != nil {
		return nil, err
	}
	return m, nil
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
