package github

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

const docRepoInstallation = "https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app"

// repoInstallation answers GET /repos/{owner}/{repo}/installation as GitHub does:
// only to an App's JWT (verified with the App's public key), with the installation
// of that App whose repositories include owner/repo, else 404.
func (s *Server) repoInstallation(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	appID, ok := s.app(w, r, docRepoInstallation)
	if !ok {
		return
	}
	owner, repo := r.PathValue("owner"), r.PathValue("repo")
	full := owner + "/" + repo
	for id, in := range s.installations {
		if in.appID == appID && slices.ContainsFunc(in.repos, func(r string) bool { return strings.EqualFold(r, full) }) {
			reply(w, http.StatusOK, map[string]any{
				"id": id, "app_id": appID, "target_type": "Organization",
				"account":              map[string]any{"login": owner, "type": "Organization"},
				"repository_selection": "selected",
				"access_tokens_url":    s.URL + "/api/v3/app/installations/" + strconv.FormatInt(id, 10) + "/access_tokens",
				"permissions":          in.permissions(),
			})
			return
		}
	}
	refuse(w, http.StatusNotFound, "Not Found", docRepoInstallation)
}

// InstallationLookups is how many times the App routes were asked which installation
// owner/name has.
func (s *Server) InstallationLookups(owner, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r == "GET /api/v3/repos/"+owner+"/"+name+"/installation" {
			n++
		}
	}
	return n
}

// permissions are the installation's as GitHub lists them.
func (in *installation) permissions() map[string]string {
	level := "read"
	if in.perm == Write {
		level = "write"
	}
	return map[string]string{"contents": level, "metadata": "read", "pull_requests": level}
}
