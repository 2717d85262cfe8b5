package core

// Workspaces are the use cases of the REST API (and of the chat bots, through Chat):
// workspaces, their messages and attachments, the catalog, and API keys.
type Workspaces struct {
	outbox
	logger
	store     workspacesStore
	blobs     BlobStore
	providers Providers
	agents    AgentCatalog
	mirror    RepoMirror
	// feeds serve the event streams: one reader per workspace with streams open.
	feeds *eventFeeds
	// quotas are the hub's default limits per account.
	quotas Quotas
	// host records the host of the local workspaces created here (host.go).
	host HostConfig
	// pulls open pull requests when asked, and refresh their state when read.
	pulls pullRequests
}

// workspacesStore is what Workspaces reads and writes.
type workspacesStore interface {
	TxStore
	AccountQueries
	ProjectQueries
	WorkspaceQueries
	MessageQueries
	AssetQueries
	TurnEventQueries
	ApprovalQueries
	PullQueries
}
