package postgres

// Statements the external tests plan (plan_test.go), exported for tests only.
var (
	NewestWorkspaceSQL       = workspaceSelect + newestWorkspaceWhere
	ClaimWorkspacesSQL       = workspaceQueue.claimSQL()
	OtherAccountWaitingSQL   = otherAccountWaitingSQL
	ListWebhookDeliveriesSQL = listWebhookDeliveriesSQL
	ListDeliveryAttemptsSQL  = listDeliveryAttemptsSQL
	LockLostHostWorkspaceSQL = lockLostHostWorkspaceSQL
	ReleaseLostHostSQL       = releaseLostHostWorkspacesSQL
)
