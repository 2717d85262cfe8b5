package core

import (
	"errors"
	"fmt"
)

// Error is the one error vocabulary of the hub. Code is the wire code of api.md
// (or behaviour.md); Detail is a short human sentence that never carries internals.
// http_status.go maps Code to an HTTP status in one table (the API and the app answer
// with it); bots/ map it to chat sentences.
type Error struct {
	Code   string
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Code
	}
	return e.Code + ": " + e.Detail
}

// Errorf builds an *Error with a formatted detail.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the wire code of err, or CodeInternal when err is not an *Error.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Chat-only codes: refusals a chat front-end words for people (bots/chat/words.go);
// never on the REST wire, so they have no HTTP status.
const (
	CodeChatNotBound       = "chat_not_bound"
	CodeChatNoWorkspace    = "chat_no_workspace"
	CodeChatProjectUnknown = "chat_project_unknown"
	// CodeChatNotAllowed: the binding limits who may start or talk, or where.
	CodeChatNotAllowed = "chat_not_allowed"
	// CodeChatDirectMessage: workspaces are started and driven in a server's channels.
	CodeChatDirectMessage = "chat_direct_message"
)

// Wire codes. Every code the hub can answer with is listed here and nowhere else
// (http_status.go gives each its HTTP status; a test checks that none is missing).
const (
	// 400
	CodeInvalidJSON            = "invalid_json"
	CodeInvalidRequest         = "invalid_request"
	CodeInvalidPrompt          = "invalid_prompt"
	CodeCloudProjectRequired   = "cloud_project_required"
	CodeAgentAndModelRequired  = "agent_and_model_required"
	CodeInvalidGitRef          = "invalid_git_ref"
	CodeInvalidIdempotencyKey  = "invalid_idempotency_key"
	CodeIdempotencyKeyMismatch = "idempotency_key_mismatch"
	CodeInvalidMessage         = "invalid_message"
	CodeInvalidAssetID         = "invalid_asset_id"
	CodeInvalidMessageQuery    = "invalid_message_query"
	CodeUnsupportedAssetType   = "unsupported_asset_type"
	CodeInvalidAssetSize       = "invalid_asset_size"
	CodeInvalidAssetBody       = "invalid_asset_body"
	CodeInvalidWebhookURL      = "invalid_webhook_url"
	CodeInvalidWebhookDesc     = "invalid_webhook_description"
	// CodeCommitsRefused: a runtime's commits upload is not a bundle of the workspace's
	// branch, or its objects fail git's checks (runtime API only).
	CodeCommitsRefused = "commits_refused"
	// CodeCommitsTooLarge: a runtime's upload would pass the size of one object or of
	// the workspace's branch that the hub takes (runtime API only).
	CodeCommitsTooLarge = "commits_too_large"
	// 401
	CodeMissingAPIKey = "missing_api_key"
	CodeInvalidAPIKey = "invalid_api_key"
	// CodeRuntimeTokenInvalid: the runtime API's token is unknown or was revoked (the
	// machine was stopped or started again): that runtime process stops.
	CodeRuntimeTokenInvalid = "runtime_token_invalid"
	// 403
	CodeEntitlementRequired   = "cloud_entitlement_required"
	CodeBillingHold           = "cloud_billing_hold"
	CodeBillingPeriodMissing  = "cloud_billing_period_missing"
	CodeCrossOriginNotAllowed = "cross_origin_not_allowed"
	// CodeNotAMember: a person signed in whom no account of the hub has as a member.
	CodeNotAMember = "not_a_member"
	// CodeOwnerRequired: an app action only the account's owners may take.
	CodeOwnerRequired = "owner_required"
	// CodeKeyScopeRequired: the API key is limited to scopes that leave out the one
	// the route needs (an extension: api.md's keys have full access).
	CodeKeyScopeRequired = "key_scope_required"
	// CodeSessionInvalid: the app's session ended, expired or never was.
	CodeSessionInvalid = "session_invalid"
	// 404
	CodeNotFound          = "not_found"
	CodeProjectNotFound   = "cloud_project_not_found"
	CodeWorkspaceNotFound = "cloud_workspace_not_found"
	// CodeScheduleNotFound: no schedule with this id on this account (an extension).
	CodeScheduleNotFound = "schedule_not_found"
	CodeAssetNotFound    = "api_asset_not_found"
	CodeWebhookNotFound  = "webhook_not_found"
	// CodeTurnNotFound: no turn with this id in the workspace (stop).
	CodeTurnNotFound = "turn_not_found"
	// CodeApprovalNotFound: no approval with this id in the workspace.
	CodeApprovalNotFound = "approval_not_found"
	// 405
	CodeMethodNotAllowed = "method_not_allowed"
	// 501: a Transfer-Encoding the server does not implement (RFC 9112 6.1).
	CodeNotImplemented = "not_implemented"
	// 415, outside /v1/api only (the API answers its documented 400 codes): a
	// content-encoded body, refused before anything inflates it.
	CodeUnsupportedContentEncoding = "unsupported_content_encoding"
	// 409
	CodeProjectNotReady               = "cloud_project_not_ready"
	CodeSnapshotUnavailable           = "cloud_snapshot_unavailable"
	CodeBranchInUse                   = "cloud_branch_in_use" // wire form: cloud_branch_in_use:<workspaceId>
	CodeIdempotencyKeyReused          = "idempotency_key_reused_with_different_request"
	CodeIdempotencyKeyReusedAsset     = "idempotency_key_reused_with_different_asset"
	CodeWorkspaceNotAcceptingMessages = "workspace_not_accepting_messages"
	CodeMessageNotDeliverable         = "message_not_deliverable"
	CodeWebhookLimitReached           = "webhook_limit_reached"
	// CodeProjectInUse: operator commands only (project remove while workspaces use it).
	CodeProjectInUse = "project_in_use"
	// CodeTurnNotRunning: the turn already ended; there is nothing to stop.
	CodeTurnNotRunning = "turn_not_running"
	// CodeApprovalNotPending: the approval was already decided (or timed out, or its
	// turn ended); a decision is taken once.
	CodeApprovalNotPending = "approval_not_pending"
	// CodeRuntimeSuperseded: a newer runtime process of the workspace said hello.
	CodeRuntimeSuperseded = "runtime_superseded"
	// CodeRateLimited: the key sent more requests than the hub takes (429).
	CodeRateLimited = "rate_limited"
	// CodeTooManyStreams: the key holds as many open event streams as it may (429).
	CodeTooManyStreams = "too_many_streams"
	// CodeQuotaExceeded: the account is at one of its quotas (429, an extension: api.md
	// leaves limits open).
	CodeQuotaExceeded = "quota_exceeded"
	// CodePullRequestRefused: the pull request cannot be opened: the project does not
	// push or names no forge, or the forge refused (its words in the detail).
	CodePullRequestRefused = "pull_request_refused"
	// CodeImportInProgress: the runtime API's commits upload while another upload of
	// the same workspace is being taken.
	CodeImportInProgress = "commits_import_in_progress"
	// CodeRuntimeStopped: the workspace is pausing, archiving, deleting or failed; its
	// runtime stops.
	CodeRuntimeStopped = "runtime_stopped"
	// 500, 503
	CodeInternal                = "internal_error"
	CodeServiceUnavailable      = "service_unavailable"
	CodeProviderUnavailable     = "cloud_provider_unavailable"
	CodeProviderRequired        = "cloud_provider_required"
	CodeEncryptionNotConfigured = "api_content_encryption_not_configured"
	CodeSealFailed              = "api_content_seal_failed"
	CodeWorkspaceStateContended = "cloud_workspace_state_contended"
	CodeAssetStoreUnavailable   = "api_asset_store_unavailable"
)

// ErrUnavailable marks a store or dependency that cannot be reached; api/ answers 503
// service_unavailable. Adapters wrap connection failures with it.
var ErrUnavailable = errors.New("store unavailable")

// ErrContended marks a lock that could not be taken in time (a workspace row held by
// another state change); the use case turns it into cloud_workspace_state_contended.
var ErrContended = errors.New("row lock contended")

// ErrConflict marks a unique-constraint violation reported by the store.
var ErrConflict = errors.New("unique conflict")

// ErrNoRows is returned by store lookups that find nothing.
var ErrNoRows = errors.New("no rows")
