package turns_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

func TestRepositoryCredentialsAreNeverShown(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()
	// Refused at add, saying how to pass the token instead.
	_, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: "https://bob:ghp_secret@example.com/org/r.git"})
	if err == nil || !strings.Contains(err.Error(), "WSHUB_GIT_HTTPS_TOKEN") || strings.Contains(err.Error(), "ghp_secret") {
		t.Fatalf("expected the URL refused with how to pass a token, without the token, got %v", err)
	}
	// A project stored with credentials before they were refused is shown without them.
	if _, err := h.PG().DB().ExecContext(ctx, `UPDATE projects SET repository = 'https://bob:ghp_secret@example.com/org/r.git' WHERE id = $1`, h.Project.ID); err != nil {
		t.Fatal(err)
	}
	r := h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 200, "")
	if strings.Contains(string(r.Raw), "ghp_secret") || strings.Contains(string(r.Raw), "bob") {
		t.Fatalf("expected the repository shown without credentials, got %s", r.Raw)
	}
	if got := r.Body["projects"].([]any)[0].(map[string]any)["repository"]; got != "https://example.com/org/r.git" {
		t.Fatalf("expected https://example.com/org/r.git, got %v", got)
	}
}
