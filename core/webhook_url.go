package core

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// WebhookURLPolicy holds the registration rules that depend on configuration.
type WebhookURLPolicy struct {
	// PublicHost is the hub's own public host name; endpoints may not point at it, nor
	// at any name that resolves to one of its addresses.
	PublicHost string
	// AllowInsecure admits http and loopback targets (tests and development only).
	AllowInsecure bool
	// Resolver looks names up to compare them with PublicHost (nil: by name only).
	Resolver Resolver
}

// Resolver looks a host name up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// lookupFor bounds a registration's lookups: a slow resolver delays the request, it
// does not hold it.
const lookupFor = 5 * time.Second

// checkNotHub refuses a URL whose host resolves to an address of the hub's public
// host: an alias (another name, a CNAME, an A record copied) reaches the hub as its
// own name does. A lookup that fails lets the URL through (fail open: delivery checks
// every address it dials against the hub's again). With AllowInsecure a loopback
// address is not compared, as loopback targets are allowed then.
func (p WebhookURLPolicy) checkNotHub(ctx context.Context, rawURL string) error {
	if p.Resolver == nil || p.PublicHost == "" {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil // CheckWebhookURL parsed it already
	}
	ctx, cancel := context.WithTimeout(ctx, lookupFor)
	defer cancel()
	hub, err := p.Resolver.LookupNetIP(ctx, "ip", p.PublicHost)
	if err != nil {
		return nil
	}
	if p.AllowInsecure {
		hub = slices.DeleteFunc(hub, func(h netip.Addr) bool { return h.Unmap().IsLoopback() })
	}
	if len(hub) == 0 {
		// Nothing to compare (a development hub on loopback): the URL's host is not
		// looked up at all.
		return nil
	}
	addrs, err := p.Resolver.LookupNetIP(ctx, "ip", u.Hostname())
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		a = a.Unmap()
		if slices.ContainsFunc(hub, func(h netip.Addr) bool { return h.Unmap() == a }) {
			return Errorf(CodeInvalidWebhookURL, "url must not point at this hub: %s resolves to %s, an address of %s", u.Hostname(), a, p.PublicHost)
		}
	}
	return nil
}

// CheckWebhookURL applies behaviour.md's registration rules and returns the URL to store.
// Delivery re-checks the resolved addresses; this check only refuses what is plainly
// not a public https endpoint.
func (p WebhookURLPolicy) CheckWebhookURL(raw string) (string, error) {
	bad := func(why string) error { return Errorf(CodeInvalidWebhookURL, "url %s", why) }
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", bad("is required")
	}
	if utf8.RuneCountInString(raw) > MaxWebhookURLChars {
		return "", bad("must be at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !u.IsAbs() {
		return "", bad("must be an absolute URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && !(p.AllowInsecure && scheme == "http") {
		return "", bad("must use https")
	}
	if u.User != nil {
		return "", bad("must not carry user information")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "", bad("must not have a fragment")
	}
	host := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", bad("must name a host")
	}
	if why := portProblem(u.Port()); why != "" {
		return "", bad(why)
	}
	if p.AllowInsecure && isLoopbackHost(host) {
		return normalized(u)
	}
	if why := p.hostProblem(host); why != "" {
		return "", bad(why)
	}
	return normalized(u)
}

// portProblem says why a URL's port cannot be dialled ("" when it can, or there is
// none): url.Parse takes any digits as a port; a dial would fail on 0 or > 65535.
func portProblem(port string) string {
	if port == "" {
		return ""
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "must have a port from 1 to 65535"
	}
	return ""
}

// hostProblem says why host (lower case, without its final dot) is not a public host
// name other than the hub's ("" when it is), in words that follow "url" or "the
// repository URL". It goes by the name only: whoever dials checks the addresses.
func (p WebhookURLPolicy) hostProblem(host string) string {
	switch {
	case host == "":
		return "must name a host"
	case isIPLiteral(host):
		return "must use a host name, not an IP address"
	case host == "localhost" || strings.HasSuffix(host, ".localhost"),
		strings.HasSuffix(host, ".local"), strings.HasSuffix(host, ".internal"):
		return "must be a public host"
	case !strings.Contains(host, "."):
		return "must be a fully qualified host name"
	case p.PublicHost != "" && host == strings.TrimRight(strings.ToLower(p.PublicHost), "."):
		return "must not point at this hub"
	case strings.HasPrefix(host, "-"):
		// ssh would take it for an option.
		return "has an invalid host name"
	}
	for _, c := range host {
		if c >= utf8.RuneSelf {
			// HTTP clients map such hosts through IDNA (a fullwidth "127.0.0.１" or
			// "foo.ｌｏｃａｌｈｏｓｔ" reaches loopback), so the checks above would be
			// checking another host: international names are taken in their xn-- form.
			return "must give an international host name in its ASCII (xn--) form"
		}
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "has an invalid host name"
		}
	}
	return ""
}

// normalized is the URL as stored and returned. Escaping can make it longer than what
// was sent, and the limit holds for what the hub keeps and shows too.
func normalized(u *url.URL) (string, error) {
	out := u.String()
	if utf8.RuneCountInString(out) > MaxWebhookURLChars {
		return "", Errorf(CodeInvalidWebhookURL, "url must be at most 2048 characters once escaped")
	}
	return out, nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isIPLiteral reports IPv6 and IPv4 in any notation browsers and resolvers accept:
// dotted, shortened (127.1), decimal (2130706433), octal (0177.0.0.1) and hex (0x7f.1).
// As in the WHATWG URL parser, a host whose last label is a number is an IPv4 address.
func isIPLiteral(host string) bool {
	if net.ParseIP(host) != nil || strings.Contains(host, ":") {
		return true
	}
	labels := strings.Split(host, ".")
	last := labels[len(labels)-1]
	return isNumericLabel(last)
}

func isNumericLabel(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "0x") {
		s = s[2:]
		for _, c := range s {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
