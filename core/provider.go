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

// SizeOf is the size a workspace of provider id runs with: the provider's first (today
// its only) size; the zero value when the provider is not listed.
func SizeOf(providers []Provider, id string) ProviderSize {
	for _, p := range providers {
		if p.ID == id && len(p.Sizes) > 0 {
			return p.Sizes[0]
		}
	}
	return ProviderSize{}
}
