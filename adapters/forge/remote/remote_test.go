package remote

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/netguard"
	"github.com/wshub/wshub/core"
)

func TestARepositoryURLIsReadInEveryFormGitTakes(t *testing.T) {
	for _, c := range []struct {
		repository string
		want       Remote
	}{
		{"https://github.com/acme/widgets.git", Remote{"https", "github.com", "acme/widgets"}},
		{"https://user@GitLab.example.com:8443/acme/sub/widgets/", Remote{"https", "gitlab.example.com:8443", "acme/sub/widgets"}},
		{"git@github.com:acme/widgets.git", Remote{"https", "github.com", "acme/widgets"}},
		{"gitlab.com:acme/widgets", Remote{"https", "gitlab.com", "acme/widgets"}},
		{"ssh://git@gitlab.example.com:2222/acme/widgets.git", Remote{"https", "gitlab.example.com", "acme/widgets"}},
		{"ssh://git@[2001:db8::1]:2222/acme/widgets.git", Remote{"https", "[2001:db8::1]", "acme/widgets"}},
		{"http://127.0.0.1:3000/acme/widgets.git", Remote{"http", "127.0.0.1:3000", "acme/widgets"}},
		{"http://[::1]:3000/acme/widgets.git", Remote{"http", "[::1]:3000", "acme/widgets"}},
		{"http://localhost/acme/widgets.git", Remote{"http", "localhost", "acme/widgets"}},
	} {
		got, err := Parse(c.repository)
		if err != nil || got != c.want {
			t.Errorf("%s: expected %+v, got %+v (%v)", c.repository, c.want, got, err)
		}
	}
}

func TestAURLThatIsNoForgesRepositoryIsRefusedInWords(t *testing.T) {
	for _, repository := range []string{
		"http://github.com/acme/widgets.git",
		"http://10.0.0.5/acme/widgets.git",
		"file:///srv/acme/widgets.git",
		"/srv/acme/widgets.git",
		"https://github.com/widgets",
		"https://github.com/acme/./widgets",
		"ftp://example.com/acme/widgets",
		"",
	} {
		_, err := Parse(repository)
		var r *core.ForgeRefusal
		if !errors.As(err, &r) || r.Status != 0 || r.Reason == "" {
			t.Errorf("%q: expected a refusal in words, got %v", repository, err)
		}
	}
}

func TestARefusalDoesNotRepeatCredentialsInTheURL(t *testing.T) {
	_, err := Parse("http://user:s3cret@example.com/acme/widgets.git")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("expected a refusal without the password, got %v", err)
	}
}

// A project whose repository an owner gave is called at public addresses only; the
// operator's projects through the client the forge was given, which may reach inside.
func TestAGuardedProjectsForgeCallsStayOutside(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	open := &http.Client{Timeout: 5 * time.Second}
	operators := &core.Project{Repository: srv.URL + "/org/repo.git"}
	owners := &core.Project{Repository: srv.URL + "/org/repo.git", RemoteGuarded: true}
	resp, err := Client(operators, nil, nil, open).Get(srv.URL)
	if err != nil {
		t.Fatalf("expected an operator's project to reach its forge on loopback, got %v", err)
	}
	_ = resp.Body.Close()
	if _, err := Client(owners, open, nil, open).Get(srv.URL); !errors.Is(err, netguard.ErrProhibited) {
		t.Fatalf("expected an owner's project refused a forge on loopback, got %v", err)
	}
}
