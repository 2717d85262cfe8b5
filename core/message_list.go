package core

import (
	"context"
	"strconv"
	"strings"
)

// MaxSafeInteger is 2^53-1, the largest integer a JSON number holds exactly in every
// client (JavaScript's Number.MAX_SAFE_INTEGER): seq and latestSeq never exceed it, and
// an afterSeq above it is not a position a client could have been given.
const MaxSafeInteger = 1<<53 - 1

// ParseMessageQuery reads List messages' afterSeq and limit (empty means default).
func ParseMessageQuery(afterSeq, limit string) (int64, int, error) {
	after, lim := int64(0), MaxMessagesPage
	if s := strings.TrimSpace(afterSeq); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > MaxSafeInteger {
			return 0, 0, Errorf(CodeInvalidMessageQuery, "afterSeq must be an integer from 0 to 9007199254740991")
		}
		after = v
	}
	if s := strings.TrimSpace(limit); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil && !isOverflow(err) || v < 1 {
			return 0, 0, Errorf(CodeInvalidMessageQuery, "limit must be an integer from 1 to 200")
		}
		lim = int(min(v, MaxMessagesPage)) // larger values are capped
	}
	return after, lim, nil
}

func isOverflow(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// ListMessages returns one page of the conversation, oldest first, with the assets of
// its user messages (one query for the page) and the turn failure of its newest turn.
func (s *Workspaces) ListMessages(ctx context.Context, acct *Account, workspaceID string, afterSeq int64, limit int) (*MessagePage, error) {
	ws, err := accountWorkspace(ctx, s.store, acct, workspaceID)
	if err != nil {
		return nil, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
	}
	rows, err := s.store.ListMessages(ctx, ws.ID, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	page := &MessagePage{Messages: make([]*Message, 0, len(rows)), LatestSeq: afterSeq}
	var assetIDs []string
	for _, r := range rows {
		assetIDs = append(assetIDs, r.AssetIDs...)
	}
	assets := map[string]*Asset{}
	if len(assetIDs) > 0 {
		found, err := s.store.AssetsByID(ctx, ws.ID, assetIDs)
		if err != nil {
			return nil, err
		}
		for _, a := range found {
			assets[a.ID] = a
		}
	}
	for _, r := range rows {
		// The page's messages are the rows' own, not copies: a page is up to 200 of them
		// on the API's hottest list, and a copy each was a seventh of what it allocated.
		m := &r.Message
		if m.Text, err = s.openOnce(r.SealedText, SealedMessageText.binding(ws.ID, m.ID)); err != nil {
			return nil, err
		}
		for _, id := range m.AssetIDs {
			if a := assets[id]; a != nil {
				m.Assets = append(m.Assets, a)
			}
		}
		if r.FailureCode != "" {
			text, err := s.openOnce(r.SealedFailure, SealedMessageFailure.binding(ws.ID, m.ID))
			if err != nil {
				return nil, err
			}
			m.Failure = &TurnFailure{TurnID: m.TurnID, Agent: r.FailureAgent, Code: r.FailureCode, Message: text}
		}
		page.Messages = append(page.Messages, m)
		page.LatestSeq = m.Seq
	}
	// turnFailure: present when the newest turn on the page ended in error.
	for i := len(page.Messages) - 1; i >= 0; i-- {
		if m := page.Messages[i]; m.Role == RoleAssistant {
			if m.Outcome == OutcomeError {
				page.TurnFailure = m.Failure
			}
			break
		}
	}
	return page, nil
}
