package core

// A local workspace runs inside a hub, its checkout in that hub's data directory: on
// one host. Replicas share the database but not their disks, so a local workspace is
// stepped only by the hubs of the host that holds it (Workspace.Host). The host is
// recorded when the workspace is created on a hub that steps workspaces itself, else
// by the first claim that takes it, in the claim's statement. That first claim also
// takes on a local workspace from before hosts were recorded: which host holds such a
// checkout is known to no one, but on a one-host hub it is the one that claims.
// Remote providers' workspaces have no host: any replica reaches their machines.

// HostConfig says which host this hub is on, and what it does with local workspaces.
type HostConfig struct {
	// ID names this hub's host (WSHUB_HOST_ID): the hubs that share a data directory
	// share it.
	ID string
	// Local: this hub runs local workspaces (local is among its providers). Its worker
	// claims those of its host, and takes on a local workspace no host holds yet;
	// without it, it claims none.
	Local bool
	// Pin records ID on each local workspace created here, when this hub also steps
	// workspaces (the worker role). A hub that only serves requests leaves the host to
	// the first claim, or its workspaces would wait for a worker that never comes.
	Pin bool
}

// claimHost is the host the worker's claims serve ("": no local workspace).
func (h HostConfig) claimHost() string {
	if !h.Local {
		return ""
	}
	return h.ID
}

// pinHost is the host a workspace created here is recorded on at once ("": none yet).
func (h HostConfig) pinHost(providerID string) string {
	if !h.Pin || !h.Local || providerID != LocalProviderID {
		return ""
	}
	return h.ID
}
