package runtimeapi_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// providerOf creates a workspace (with providerId when given) and returns its provider.
func providerOf(t *testing.T, h *hubtest.Hub, key, providerID string) string {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "m"}
	if providerID != "" {
		body["providerId"] = providerID
	}
	r := h.Call("POST", "/v1/api/workspaces", key, body).Expect(t, 201, "")
	return r.Body["workspace"].(map[string]any)["providerId"].(string)
}

// A create that names no provider gets the account's, else WSHUB_DEFAULT_PROVIDER, else
// local when the hub has it; one that names a provider gets that one.
func TestTheProviderOfACreateThatNamesNone(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithProcessProvider(t)) // local and process; no jobs: workspaces stay queued
	ctx := context.Background()
	if got := providerOf(t, h, h.Key, ""); got != core.LocalProviderID {
		t.Fatalf("expected local by default, got %s", got)
	}
	other := h.Beside(t, func(c *hub.Config) { c.DefaultProvider = "process" })
	if got := providerOf(t, other, h.Key, ""); got != "process" {
		t.Fatalf("expected WSHUB_DEFAULT_PROVIDER's process, got %s", got)
	}
	process, none := "process", ""
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{ProviderID: &process}); err != nil {
		t.Fatal(err)
	}
	if got := providerOf(t, h, h.Key, ""); got != "process" {
		t.Fatalf("expected the account's provider, got %s", got)
	}
	if got := providerOf(t, h, h.Key, "local"); got != core.LocalProviderID {
		t.Fatalf("expected the request's provider first, got %s", got)
	}
	nosuch := "kubernetes"
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{ProviderID: &nosuch}); err == nil || !strings.Contains(err.Error(), "not one of this hub's") {
		t.Fatalf("expected a provider the hub lacks refused, got %v", err)
	}
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{ProviderID: &none}); err != nil {
		t.Fatal(err)
	}
	if got := providerOf(t, h, h.Key, ""); got != core.LocalProviderID {
		t.Fatalf("expected the hub's default back, got %s", got)
	}
	if err := h.Service.Admin.BindChat(ctx, &core.ChatBinding{Platform: core.PlatformSlack, TeamID: "T1", AccountID: h.Account.ID, ProviderID: "nosuch"}); err == nil {
		t.Fatal("expected a chat binding to a provider the hub lacks refused")
	}
}

// A hub whose providers leave local out runs no agent itself: it starts on a machine
// without bubblewrap, does not list local, and puts workspaces on its provider.
func TestAHubWithoutLocalNeedsNoBubblewrap(t *testing.T) {
	runtimeBin := hubtest.WshubBinary(t) // built with the machine's PATH
	// Only git on PATH: no bwrap (nor anything else the sandbox would need).
	bin := t.TempDir()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(git, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if _, err := exec.LookPath("bwrap"); err == nil {
		t.Fatal("expected no bwrap on this test's PATH")
	}
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) {
		c.Providers, c.RuntimeProgram = []string{"process"}, runtimeBin
	}))
	list := h.Call("GET", "/v1/api/providers", h.Key, nil).Expect(t, 200, "").Body["providers"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["providerId"] != "process" {
		t.Fatalf("expected only the process provider listed, got %v", list)
	}
	if got := providerOf(t, h, h.Key, ""); got != "process" {
		t.Fatalf("expected the hub's only provider, got %s", got)
	}
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m", "providerId": "local"}).
		Expect(t, 503, core.CodeProviderUnavailable)
	ready := h.Call("GET", "/readyz", "", nil).Expect(t, 200, "")
	if got, _ := ready.Body["agentLimits"].(string); !strings.Contains(got, "local is not among WSHUB_PROVIDERS") {
		t.Fatalf("expected /readyz to say this hub runs no agent, got %v", ready.Body)
	}
}
