package core

import (
	"context"
	"time"
)

// AuditEntry is one change to an account's keys, webhooks or members: who made it,
// when, from where.
type AuditEntry struct {
	ID        int64
	AccountID string
	At        time.Time
	// Actor is "member:<id>" (the app), "operator" (wshub admin) or "api:<keyId>".
	Actor     string
	ActorName string
	Action    string
	// Target is what changed: a key, webhook or member id.
	Target string
	Detail string
	// Address is where the request came from ("" for the operator's commands).
	Address string
}

// The audited actions.
const (
	AuditKeyCreated      = "key.created"
	AuditKeyRevoked      = "key.revoked"
	AuditMemberAdded     = "member.added"
	AuditMemberRole      = "member.role_changed"
	AuditMemberRemoved   = "member.removed"
	AuditMemberLinked    = "member.identity_linked"
	AuditGitHubApp       = "account.github_app"
	AuditSessionsEnded   = "member.sessions_ended"
	AuditSignInLink      = "member.signin_link"
	AuditWebhookCreated  = "webhook.created"
	AuditWebhookDeleted  = "webhook.deleted"
	actorOperator        = "operator"
	maxAuditPage         = 200
	defaultAuditPageSize = 50
)

// The audited actions of invitations: an owner invites an address, and withdraws the
// invitation, or its person declines it (accepting it is AuditMemberAdded).
const (
	AuditMemberInvited       = "member.invited"
	AuditInvitationWithdrawn = "member.invitation_withdrawn"
	AuditInvitationDeclined  = "member.invitation_declined"
)

// The audited actions of schedules: making, changing and deleting one with a key or
// from chat; pausing, resuming and running one now from the app too.
const (
	AuditScheduleCreated = "schedule.created"
	AuditScheduleUpdated = "schedule.updated"
	AuditScheduleDeleted = "schedule.deleted"
	AuditSchedulePaused  = "schedule.paused"
	AuditScheduleResumed = "schedule.resumed"
	AuditScheduleRun     = "schedule.run_now"
)

// AuditQueries are the store statements of the audit log.
type AuditQueries interface {
	InsertAudit(ctx context.Context, e *AuditEntry) error
	// ListAudit lists an account's entries with id below before (0: from the newest),
	// newest first.
	ListAudit(ctx context.Context, accountID string, before int64, limit int) ([]*AuditEntry, error)
}

// audit records what a session's person did, in the change's transaction.
func (a *AppSession) audit(ctx context.Context, q Queries, at time.Time, action, target, detail string) error {
	return a.actor().audit(ctx, q, a.AccountID, at, action, target, detail)
}

// operatorAudit records what the operator did with wshub admin.
func operatorAudit(ctx context.Context, q Queries, accountID string, at time.Time, action, target, detail string) error {
	return actor{id: actorOperator}.audit(ctx, q, accountID, at, action, target, detail)
}
