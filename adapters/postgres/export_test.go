package postgres

import (
	"context"
	"database/sql/driver"

	"github.com/lib/pq"
)

// Statements the external tests plan (plan_test.go), exported for tests only.
var (
	NewestWorkspaceSQL       = workspaceSelect + newestWorkspaceWhere
	ClaimWorkspacesSQL       = workspaceQueue.claimSQL()
	TakeNextTurnSQL          = takeNextTurnSQL
	OtherAccountWaitingSQL   = otherAccountWaitingSQL
	ListWebhookDeliveriesSQL = listWebhookDeliveriesSQL
	ListDeliveryAttemptsSQL  = listDeliveryAttemptsSQL
	LockLostHostWorkspaceSQL = lockLostHostWorkspaceSQL
	ReleaseLostHostSQL       = releaseLostHostWorkspacesSQL
)

// OpenWithNotices is Open with every notice the server sends handed to notice (the
// plans auto_explain reports, in scale_plan_test.go).
func OpenWithNotices(ctx context.Context, url string, notice func(*pq.Error)) (*Store, error) {
	return open(ctx, url, Options{}, func(c driver.Connector) driver.Connector {
		return pq.ConnectorWithNoticeHandler(c, notice)
	})
}
