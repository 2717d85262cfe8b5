package api

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// statusOf is the one table from wire code to HTTP status.
var statusOf = map[string]int{
	core.CodeInvalidJSON: 400, core.CodeInvalidRequest: 400, core.CodeInvalidPrompt: 400,
	core.CodeCloudProjectRequired: 400, core.CodeAgentAndModelRequired: 400, core.CodeInvalidGitRef: 400,
	core.CodeInvalidIdempotencyKey: 400, core.CodeIdempotencyKeyMismatch: 400, core.CodeInvalidMessage: 400,
	core.CodeInvalidAssetID: 400, core.CodeInvalidMessageQuery: 400, core.CodeUnsupportedAssetType: 400,
	core.CodeInvalidAssetSize: 400, core.CodeInvalidAssetBody: 400, core.CodeInvalidWebhookURL: 400,
	core.CodeInvalidWebhookDesc: 400, core.CodeCommitsRefused: 400,

	core.CodeMissingAPIKey: 401, core.CodeInvalidAPIKey: 401, core.CodeRuntimeTokenInvalid: 401,

	core.CodeEntitlementRequired: 403, core.CodeBillingHold: 403, core.CodeBillingPeriodMissing: 403,
	core.CodeCrossOriginNotAllowed: 403, core.CodeNotAMember: 403, core.CodeOwnerRequired: 403,
	core.CodeSessionInvalid: 401,

	core.CodeNotFound: 404, core.CodeProjectNotFound: 404, core.CodeWorkspaceNotFound: 404,
	core.CodeAssetNotFound: 404, core.CodeWebhookNotFound: 404, core.CodeTurnNotFound: 404, core.CodeApprovalNotFound: 404,

	core.CodeMethodNotAllowed: 405,

	core.CodeCommitsTooLarge: 413,

	core.CodeUnsupportedContentEncoding: 415,

	core.CodeQuotaExceeded: 429, core.CodeRateLimited: 429, core.CodeTooManyStreams: 429,

	core.CodeProjectNotReady: 409, core.CodeSnapshotUnavailable: 409, core.CodeBranchInUse: 409,
	core.CodeIdempotencyKeyReused: 409, core.CodeIdempotencyKeyReusedAsset: 409,
	core.CodeWorkspaceNotAcceptingMessages: 409, core.CodeMessageNotDeliverable: 409, core.CodeWebhookLimitReached: 409, core.CodeProjectInUse: 409,
	core.CodeRuntimeSuperseded: 409, core.CodeRuntimeStopped: 409, core.CodeTurnNotRunning: 409, core.CodeApprovalNotPending: 409,
	core.CodeImportInProgress: 409,

	core.CodeInternal: 500,

	core.CodeNotImplemented: 501,

	core.CodeServiceUnavailable: 503, core.CodeProviderUnavailable: 503, core.CodeProviderRequired: 503,
	core.CodeEncryptionNotConfigured: 503, core.CodeSealFailed: 503, core.CodeWorkspaceStateContended: 503,
	core.CodeAssetStoreUnavailable: 503,
}

type errorBody struct {
	Error  string `json:"error"`
	Detail string `json:"detail,omitempty"`
}

// writeError answers err as an error body. Anything that is not a core.Error is logged
// and shown only as internal_error (or service_unavailable when the store is down).
func writeError(c *fiber.Ctx, log *slog.Logger, err error) error {
	var ce *core.Error
	if !errors.As(err, &ce) {
		if errors.Is(err, core.ErrUnavailable) {
			log.Warn("store unavailable", "method", c.Method(), "path", c.Path(), "err", err)
			ce = &core.Error{Code: core.CodeServiceUnavailable, Detail: "the service is temporarily unavailable; retry"}
		} else {
			log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
			ce = &core.Error{Code: core.CodeInternal, Detail: "an unexpected error occurred"}
		}
	}
	status, ok := statusOf[core.BaseErrorCode(ce.Code)]
	if !ok {
		log.Error("error code without status", "code", ce.Code)
		status = 500
	}
	return c.Status(status).JSON(errorBody{Error: ce.Code, Detail: ce.Detail})
}
