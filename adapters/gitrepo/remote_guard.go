package gitrepo

import (
	"github.com/wshub/wshub/internal/shellword"

	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/wshub/wshub/adapters/netguard"
)

// RemoteGuard keeps the hub's git, for a repository an account's owner gave in the
// app, to public addresses. The app checks the repository's name when it is given;
// a name can still resolve (or be rebound) to the hub's host, its private networks or
// the metadata service, and an https remote can redirect there. So before each git
// command the name is resolved here, every address checked, and git is pinned to the
// address checked (curl's resolve list for http, ssh's HostName for ssh) with
// redirects off: the address git connects to is the one that was allowed.
type RemoteGuard struct {
	// Resolver looks names up (nil: the system's).
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	// AllowLoopback admits loopback addresses (tests and development, as the webhook
	// policy's AllowInsecure).
	AllowLoopback bool
}

// remotePin is the address a guarded remote's git must connect to.
type remotePin struct {
	ssh        bool // an ssh remote; otherwise http(s)
	host, port string
	addr       netip.Addr
}

// guardLookupFor bounds the lookup before a git command.
const guardLookupFor = 10 * time.Second

// pin resolves repository's host and returns the address git is to use, or why none
// may be used: any inside address among the name's refuses the remote, so a name
// cannot be made to alternate between a public and an inside answer.
func (g *RemoteGuard) pin(ctx context.Context, repository string) (*remotePin, error) {
	p, err := remoteHost(repository)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(p.host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := g.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		ctx, cancel := context.WithTimeout(ctx, guardLookupFor)
		defer cancel()
		if addrs, err = r.LookupNetIP(ctx, "ip", p.host); err != nil {
			return nil, fmt.Errorf("the repository's host %s could not be looked up: %w", p.host, err)
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("the repository's host %s has no address", p.host)
	}
	for _, a := range addrs {
		a = a.Unmap()
		if g.AllowLoopback && a.IsLoopback() {
			continue
		}
		if err := netguard.SafeAddr(a); err != nil {
			return nil, fmt.Errorf("the repository's host %s resolves to %s, an address inside the hub's network: "+
				"a repository given in the app must be on a public address", p.host, a)
		}
	}
	p.addr = addrs[0].Unmap()
	return p, nil
}

// remoteHost is the host and port git dials for repository: https://, http:// and
// ssh:// URLs, and git's short form of ssh, [user@]host:path.
func remoteHost(repository string) (*remotePin, error) {
	if !strings.Contains(repository, "://") {
		host, _, ok := strings.Cut(repository, ":")
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		if !ok || host == "" || strings.Contains(host, "/") {
			return nil, fmt.Errorf("the repository %q names no host", repository)
		}
		return &remotePin{ssh: true, host: host, port: "22"}, nil
	}
	u, err := url.Parse(repository)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("the repository %q names no host", repository)
	}
	p := &remotePin{host: u.Hostname(), port: u.Port()}
	switch strings.ToLower(u.Scheme) {
	case "https":
		p.port = cmpPort(p.port, "443")
	case "http":
		p.port = cmpPort(p.port, "80")
	case "ssh":
		p.ssh, p.port = true, cmpPort(p.port, "22")
	default:
		return nil, fmt.Errorf("the repository's scheme %s is not one a guarded remote may use", u.Scheme)
	}
	return p, nil
}

func cmpPort(port, def string) string {
	if port == "" {
		return def
	}
	return port
}

// args pin an http(s) remote: curl resolves host:port to the checked address only,
// and follows no redirect (git's default follows the first request's).
func (p *remotePin) args() []string {
	if p == nil || p.ssh {
		return nil
	}
	args := []string{"-c", "http.followRedirects=false"}
	if _, err := netip.ParseAddr(p.host); err == nil {
		return args // an address already: nothing to resolve
	}
	addr := p.addr.String()
	if p.addr.Is6() {
		addr = "[" + addr + "]"
	}
	return append(args, "-c", "http.curloptResolve="+p.host+":"+p.port+":"+addr)
}

// sshOptions pin an ssh remote: ssh connects to the checked address, and checks the
// host key it finds there under the name given, as it would have.
func (p *remotePin) sshOptions() string {
	if p == nil || !p.ssh {
		return ""
	}
	return " -o HostName=" + p.addr.String() + " -o " + shellword.Quote("HostKeyAlias="+p.host) + " -o ProxyCommand=none -o ProxyJump=none"
}
