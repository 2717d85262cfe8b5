package webhooks

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// maxErrorLen bounds an attempt's error text: it is stored with every attempt and shown
// to operators, and some Go errors embed whole certificates or response fragments.
const maxErrorLen = 300

// describe turns a transport error into short words for an operator. The URL is left
// out (url.Error prefixes it): it may carry a receiver's token in its query.
func describe(err error) string {
	var (
		refused     *refusedError
		dnsErr      *net.DNSError
		unknownCA   x509.UnknownAuthorityError
		badHost     x509.HostnameError
		certInvalid x509.CertificateInvalidError
		notTLS      tls.RecordHeaderError
		urlErr      *url.Error
	)
	switch {
	case errors.As(err, &refused):
		return refused.Error()
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			return clip("host " + dnsErr.Name + " not found")
		case dnsErr.IsTimeout:
			return clip("DNS lookup of " + dnsErr.Name + " timed out")
		}
		return clip("DNS lookup of " + dnsErr.Name + " failed")
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the receiver"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.As(err, &unknownCA):
		return "TLS certificate not trusted (unknown authority)"
	case errors.As(err, &badHost):
		return clip("TLS certificate is not valid for " + badHost.Host)
	case errors.As(err, &certInvalid):
		return clip("TLS certificate invalid: " + strings.TrimPrefix(certInvalid.Error(), "x509: "))
	case errors.As(err, &notTLS):
		return "receiver did not answer with TLS"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before a response"
	case errors.As(err, &urlErr):
		return clip(urlErr.Err.Error())
	}
	return clip(err.Error())
}

// clip makes s one line of at most maxErrorLen bytes, cut on a rune boundary.
func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) <= maxErrorLen {
		return s
	}
	const ellipsis = "…"
	cut := maxErrorLen - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
