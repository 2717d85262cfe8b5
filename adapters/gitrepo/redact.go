package gitrepo

import "strings"

// redactor takes out of a reason what an operator reading a project's failure must not
// see or does not need: where the hub keeps its data, and credentials embedded in the
// repository URL (https://user:token@host/...), which git echoes in some messages.
type redactor struct {
	dir        string // the mirrors directory
	mirror     string // this project's mirror
	tmp        string // the temporary clone, while cloning
	repository string
	token      string // the hub's HTTPS token, should git ever echo it
}

// applyLong redacts like apply, keeping up to 4 KiB (a push's remote messages).
func (r redactor) applyLong(s string) string {
	if len(s) > 4096 {
		s = s[len(s)-4096:]
	}
	return r.scrub(s)
}

func (r redactor) apply(s string) string {
	s = r.scrub(s)
	if n := len([]rune(s)); n > maxReason {
		s = string([]rune(s)[:maxReason-1]) + "…"
	}
	return s
}

// scrub takes out credentials and the hub's paths.
func (r redactor) scrub(s string) string {
	if r.token != "" {
		s = strings.ReplaceAll(s, r.token, "***")
	}
	if cred := credentials(r.repository); cred != "" {
		s = strings.ReplaceAll(s, cred+"@", "***@")
	}
	// Longest first: tmp and mirror live inside dir.
	for _, p := range []struct{ path, as string }{
		{r.tmp, "<mirror>"}, {r.mirror, "<mirror>"}, {r.dir, "<mirrors>"},
	} {
		if p.path != "" {
			s = strings.ReplaceAll(s, p.path, p.as)
		}
	}
	return s
}

// credentials returns the user-info part of an http(s) repository URL. Only http(s):
// there a user-info is a secret (a token or password), while the user of an ssh URL
// (git@host) is not, and replacing a short word like "git" would garble the message.
func credentials(repo string) string {
	rest, ok := strings.CutPrefix(repo, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(repo, "http://"); !ok {
			return ""
		}
	}
	host, _, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(host, "@"); i > 0 {
		return host[:i]
	}
	return ""
}
