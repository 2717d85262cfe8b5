package gitlab

import (
	"errors"
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/wshub/wshub/core"
)

func TestTheAPIBaseAndProjectAreDerivedFromTheRepositoryURL(t *testing.T) {
	for _, c := range []struct {
		repository, base, path string
	}{
		{"https://gitlab.com/acme/widgets.git", "https://gitlab.com/api/v4", "acme/widgets"},
		{"https://gitlab.com/acme/platform/backend/widgets.git", "https://gitlab.com/api/v4", "acme/platform/backend/widgets"},
		{"git@gitlab.com:acme/platform/widgets.git", "https://gitlab.com/api/v4", "acme/platform/widgets"},
		{"ssh://git@gitlab.com/acme/widgets.git", "https://gitlab.com/api/v4", "acme/widgets"},
		{"ssh://git@gitlab.example.com:2222/acme/sub/widgets.git", "https://gitlab.example.com/api/v4", "acme/sub/widgets"},
		{"https://gitlab.example.com:8443/acme/widgets", "https://gitlab.example.com:8443/api/v4", "acme/widgets"},
		{"http://127.0.0.1:9000/acme/widgets.git", "http://127.0.0.1:9000/api/v4", "acme/widgets"},
	} {
		base, path, err := locate(c.repository)
		if err != nil || base != c.base || path != c.path {
			t.Errorf("%s: expected %s with %s, got %s with %s (%v)", c.repository, c.base, c.path, base, path, err)
		}
	}
}

func TestARepositoryURLWithoutAProjectIsRefused(t *testing.T) {
	for _, repository := range []string{
		"http://gitlab.example.com/acme/widgets.git", // a token would travel in clear
		"https://gitlab.com/acme",
		"https://gitlab.com/acme//widgets",
		"/srv/git/widgets.git",
	} {
		_, _, err := locate(repository)
		var r *core.ForgeRefusal
		if !errors.As(err, &r) || r.Status != 0 || r.Reason == "" {
			t.Errorf("%s: expected a refusal in words, got %v", repository, err)
		}
	}
}

func TestGitLabsMessagesComeOutAsWords(t *testing.T) {
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"message":"403 Forbidden"}`, "403 Forbidden"},
		{`{"message":["Another open merge request already exists for this source branch: !1"]}`, "Another open merge request already exists for this source branch: !1"},
		{`{"message":{"title":["can't be blank","is too long"],"description":["is too long"]}}`, "description is too long; title can't be blank, is too long"},
		{`{"error":"state does not have a valid value"}`, "state does not have a valid value"},
		{`<html>bad gateway</html>`, "502 Bad Gateway"},
	} {
		if got := message(errorResponse(502, c.body)); got != c.want {
			t.Errorf("%s: expected %q, got %q", c.body, c.want, got)
		}
	}
}

func errorResponse(status int, body string) *gl.ErrorResponse {
	return &gl.ErrorResponse{StatusCode: status, Body: []byte(body)}
}
