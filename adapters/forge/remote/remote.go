// Package remote reads a project's repository URL as a forge's API sees it: the
// scheme and host the API is served from, and the repository's path there. The forge
// adapters (adapters/forge/github, adapters/forge/gitlab) derive their API base from
// it, so a project names its repository once, in whatever form git takes.
package remote

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wshub/wshub/adapters/netguard"
	"github.com/wshub/wshub/core"
)

// Remote is where a repository's forge is and what the forge calls it.
type Remote struct {
	// Scheme is "https", or "http" for a forge on loopback (a test's).
	Scheme string
	// Host is the host, lower-cased, with the port of an http(s) URL if it had one.
	Host string
	// Path is the repository's path on the forge, without slashes at either end or
	// ".git": "owner/name", "group/subgroup/name".
	Path string
}

// Parse reads repository, an https URL, an ssh:// URL or git's scp-like form
// (git@host:owner/name.git). An ssh remote's API is reached over https on the same
// host: the ssh port says nothing about the web server's. It refuses, as a
// *core.ForgeRefusal, a URL that names no repository on a host, and plain http to
// any host but loopback: the token would travel in clear.
func Parse(repository string) (Remote, error) {
	refuse := func(why string) error {
		return &core.ForgeRefusal{Reason: "the repository " + core.DisplayRepository(repository) + " " + why}
	}
	var r Remote
	var path string
	if strings.Contains(repository, "://") {
		u, err := url.Parse(repository)
		if err != nil || u.Host == "" {
			return Remote{}, refuse("is not a URL of a forge's repository")
		}
		switch strings.ToLower(u.Scheme) {
		case "https":
			r.Scheme, r.Host = "https", strings.ToLower(u.Host)
		case "http":
			if !loopback(u.Hostname()) {
				return Remote{}, refuse("is plain http: a forge's API is called over https, so that the token does not travel in clear")
			}
			r.Scheme, r.Host = "http", strings.ToLower(u.Host)
		case "ssh", "git+ssh", "ssh+git", "git":
			r.Scheme, r.Host = "https", strings.ToLower(u.Hostname())
			if strings.Contains(r.Host, ":") {
				r.Host = "[" + r.Host + "]" // an IPv6 literal, without the ssh port
			}
		default:
			return Remote{}, refuse("is not on a forge (" + u.Scheme + ")")
		}
		path = u.Path
	} else if at, colon := strings.Index(repository, "@"), strings.Index(repository, ":"); colon > 0 &&
		!strings.Contains(repository[:colon], "/") && at < colon {
		// scp-like: [user@]host:path, git's own rule (no slash before the colon).
		r.Scheme, r.Host = "https", strings.ToLower(repository[at+1:colon])
		path = repository[colon+1:]
	} else {
		return Remote{}, refuse("is not a URL of a forge's repository")
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	segments := strings.Split(path, "/")
	if r.Host == "" || len(segments) < 2 {
		return Remote{}, refuse("does not name a repository on a forge (host/owner/name)")
	}
	for _, s := range segments {
		if s == "" || s == "." || s == ".." {
			return Remote{}, refuse("has an empty or relative path segment")
		}
	}
	r.Path = path
	return r, nil
}

// Hostname is Host without its port.
func (r Remote) Hostname() string { return (&url.URL{Host: r.Host}).Hostname() }

// Origin is scheme://host[:port].
func (r Remote) Origin() string { return r.Scheme + "://" + r.Host }

// loopback reports whether host is this machine: a test's forge, where plain http
// carries nothing anyone else can read.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// guardedDefault is the client of a guarded project's calls when the forge was given
// none: public addresses only.
var guardedDefault = netguard.Client(30*time.Second, false)

// Client is the HTTP client of p's forge calls: guarded (nil: public addresses only)
// when p's repository was given by an account's owner, whose name may lead inside the
// hub's network; otherwise open (nil: fallback), as the operator's forges may be there.
func Client(p *core.Project, open, guarded, fallback *http.Client) *http.Client {
	if p != nil && p.RemoteGuarded {
		if guarded == nil {
			return guardedDefault
		}
		return guarded
	}
	if open == nil {
		return fallback
	}
	return open
}
