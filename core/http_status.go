package core

// httpStatus is the one table from error code to HTTP status: the API answers with
// it, and the app's pages too.
var httpStatus = map[string]int{
	CodeInvalidJSON: 400, CodeInvalidRequest: 400, CodeInvalidPrompt: 400,
	CodeCloudProjectRequired: 400, CodeAgentAndModelRequired: 400, CodeInvalidGitRef: 400,
	CodeInvalidIdempotencyKey: 400, CodeIdempotencyKeyMismatch: 400, CodeInvalidMessage: 400,
	CodeInvalidAssetID: 400, CodeInvalidMessageQuery: 400, CodeUnsupportedAssetType: 400,
	CodeInvalidAssetSize: 400, CodeInvalidAssetBody: 400, CodeInvalidWebhookURL: 400,
	CodeInvalidWebhookDesc: 400, CodeCommitsRefused: 400,

	CodeMissingAPIKey: 401, CodeInvalidAPIKey: 401, CodeRuntimeTokenInvalid: 401,

	CodeEntitlementRequired: 403, CodeBillingHold: 403, CodeBillingPeriodMissing: 403,
	CodeCrossOriginNotAllowed: 403, CodeNotAMember: 403, CodeOwnerRequired: 403, CodeKeyScopeRequired: 403,
	CodeSessionInvalid: 401,

	CodeNotFound: 404, CodeProjectNotFound: 404, CodeWorkspaceNotFound: 404, CodeScheduleNotFound: 404,
	CodeAssetNotFound: 404, CodeWebhookNotFound: 404, CodeTurnNotFound: 404, CodeApprovalNotFound: 404,

	CodeMethodNotAllowed: 405,

	CodeCommitsTooLarge: 413,

	CodeUnsupportedContentEncoding: 415,

	CodeQuotaExceeded: 429, CodeRateLimited: 429, CodeTooManyStreams: 429,

	CodeProjectNotReady: 409, CodeSnapshotUnavailable: 409, CodeBranchInUse: 409,
	CodeIdempotencyKeyReused: 409, CodeIdempotencyKeyReusedAsset: 409,
	CodeWorkspaceNotAcceptingMessages: 409, CodeMessageNotDeliverable: 409, CodeWebhookLimitReached: 409, CodeProjectInUse: 409,
	CodeRuntimeSuperseded: 409, CodeRuntimeStopped: 409, CodeTurnNotRunning: 409, CodeApprovalNotPending: 409,
	CodeImportInProgress: 409, CodePullRequestRefused: 409,

	CodeInternal: 500,

	CodeNotImplemented: 501,

	CodeServiceUnavailable: 503, CodeProviderUnavailable: 503, CodeProviderRequired: 503,
	CodeEncryptionNotConfigured: 503, CodeSealFailed: 503, CodeWorkspaceStateContended: 503,
	CodeAssetStoreUnavailable: 503,
}

// HTTPStatus is the status an error code is answered with (a code that carries data,
// such as cloud_branch_in_use:<id>, by its base); false for a code with none (the
// chat-only ones).
func HTTPStatus(code string) (int, bool) {
	status, ok := httpStatus[BaseErrorCode(code)]
	return status, ok
}
