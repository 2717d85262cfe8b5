package core

// Provider is a cloud machine back-end (api.md 2.7).
type Provider struct {
	ID            string
	DisplayName   string
	Sizes         []ProviderSize
	BillingSource string // service | provider
}

// ProviderSize is one machine size a provider offers.
type ProviderSize struct {
	ID          string
	DisplayName string
	VCPUCount   int
	MemoryMiB   int64
}

// LocalProviderID is the provider that runs workspaces on the hub's own host.
const LocalProviderID = "local"
