package gitea

import (
	"strings"

	"github.com/wshub/wshub/adapters/forge/remote"
)

// repository is where a project's repository is on Gitea: the API's root and the
// repository's owner and name.
type repository struct {
	// api is Gitea's root URL, scheme://host[:port][/subpath], without userinfo and
	// without a trailing slash; the SDK adds /api/v1.
	api         string
	owner, name string
}

func (r repository) String() string { return r.owner + "/" + r.name }

// locate finds Gitea from a repository's URL, as remote.Parse reads it (https, ssh,
// scp-like; plain http to loopback only, so a token never travels in clear; the ssh
// port dropped, the API being on the web's https). Gitea names a repository
// owner/name, with no subgroups, so the path's last two segments are the repository
// and any before them the subpath Gitea is served under, as its ROOT_URL would say:
// https://example.org/git/org/repo.git is org/repo of the Gitea at
// https://example.org/git. What cannot be read is a *core.ForgeRefusal with Status 0.
func locate(repo string) (repository, error) {
	r, err := remote.Parse(repo)
	if err != nil {
		return repository{}, err
	}
	segs := strings.Split(r.Path, "/")
	n := len(segs)
	api := r.Origin()
	if n > 2 {
		api += "/" + strings.Join(segs[:n-2], "/")
	}
	return repository{api: api, owner: segs[n-2], name: segs[n-1]}, nil
}
