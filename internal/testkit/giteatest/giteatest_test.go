package giteatest_test

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/internal/testkit/giteatest"
)

func TestServerTakesPushesFromTheAdministratorOnly(t *testing.T) {
	s := giteatest.Start(t)
	v, _, err := s.Client.ServerVersion()
	if err != nil || !strings.HasPrefix(giteatest.Version, "v"+v) {
		t.Fatalf("server version: want %s, got %q (%v)", giteatest.Version, v, err)
	}
	clone := s.NewRepo(t, "repo")
	if want := s.URL + "/" + s.AdminUser + "/repo.git"; clone != want {
		t.Fatalf("clone URL: want %s, got %s", want, clone)
	}
	if out, err := s.Push(t, clone, s.AdminUser, s.AdminToken, "feature"); err != nil {
		t.Fatalf("push as the administrator: want it taken, got %v\n%s", err, out)
	}
	b, _, err := s.Client.GetRepoBranch(s.AdminUser, "repo", "feature")
	if err != nil || b.Commit == nil || b.Commit.Message != "Change feature\n" {
		t.Fatalf("branch feature after the push: want the pushed commit, got %+v (%v)", b, err)
	}
	user, token := s.NewUser(t)
	out, err := s.Push(t, clone, user, token, "theirs")
	if err == nil || !strings.Contains(out, "User permission denied for writing") {
		t.Fatalf("push as a user who is no collaborator: want it refused for want of permission, got %v\n%s", err, out)
	}
}
