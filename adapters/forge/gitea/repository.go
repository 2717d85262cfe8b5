package gitea

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/wshub/wshub/core"
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

// parseRepository finds Gitea from a repository's clone URL:
//
//   - https://host[:port]/owner/repo[.git]: the API is at https://host[:port]; any path
//     before owner/repo is taken as the subpath Gitea is served under
//     (https://host/git/owner/repo.git: https://host/git), as its ROOT_URL would say;
//   - git@host:owner/repo.git and ssh://[user@]host[:port]/owner/repo.git: the API is at
//     https://host (the SSH port says nothing of the web's), the owner and repository
//     the path's last two segments;
//   - http:// is taken only to a loopback host: anywhere else the token would cross
//     the network in clear, so it is refused.
//
// Userinfo in the URL is dropped: the token comes from Forge.Token, never from the URL.
// What cannot be read is a *core.ForgeRefusal with Status 0.
func parseRepository(raw string) (repository, error) {
	refuse := func(why string) (repository, error) {
		return repository{}, &core.ForgeRefusal{Reason: fmt.Sprintf("the repository URL %q %s", redact(raw), why)}
	}
	var scheme, host, path string
	if i := strings.Index(raw, "://"); i >= 0 {
		u, err := url.Parse(raw)
		if err != nil {
			return refuse("is not a URL")
		}
		scheme, path = strings.ToLower(u.Scheme), u.Path
		switch scheme {
		case "https", "http":
			host = u.Host
		case "ssh", "git+ssh":
			scheme, host = "https", u.Hostname()
			if strings.Contains(host, ":") {
				host = "[" + host + "]" // IPv6
			}
		default:
			return refuse("is not http(s) or ssh, so says nothing of where Gitea's API is")
		}
	} else {
		// scp-like: [user@]host:owner/repo.git
		colon := strings.Index(raw, ":")
		if colon <= 0 || strings.Contains(raw[:colon], "/") {
			return refuse("is neither a URL nor host:owner/repository")
		}
		at := strings.LastIndex(raw[:colon], "@")
		scheme, host, path = "https", raw[at+1:colon], raw[colon+1:]
	}
	if host == "" {
		return refuse("has no host")
	}
	segs := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	if len(segs) < 2 {
		return refuse("does not end in owner/repository")
	}
	r := repository{owner: segs[len(segs)-2], name: strings.TrimSuffix(segs[len(segs)-1], ".git")}
	if r.owner == "" || r.name == "" {
		return refuse("does not end in owner/repository")
	}
	if scheme == "http" && !loopback(host) {
		return refuse("is plain http to a host that is not this machine: the token would cross the network in clear; use https")
	}
	r.api = scheme + "://" + host
	if sub := segs[:len(segs)-2]; len(sub) > 0 {
		r.api += "/" + strings.Join(sub, "/")
	}
	return r, nil
}

// loopback reports whether host (with or without a port) is this machine: localhost
// or a loopback address. No name is resolved.
func loopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redact drops a URL's userinfo (a token may be written there) for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "://") {
			return "(unreadable)"
		}
		return raw
	}
	if u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
