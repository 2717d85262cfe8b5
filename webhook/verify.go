package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far the signature timestamp may be from the receiver's clock,
// either way (api.md 6.3, 8). It bounds how long a captured delivery can be replayed.
const DefaultTolerance = 5 * time.Minute

// Errors returned by Verify, VerifyAt and ConstructEvent. They are wrapped with details,
// so test them with errors.Is. Every one means "reject the delivery" (answer 400); they
// differ only to make the cause easy to find.
var (
	// ErrEmptySecret is a receiver configuration mistake: an empty key would make any
	// sender able to forge signatures, so it is refused rather than used.
	ErrEmptySecret = errors.New("webhook: signing secret is empty")
	// ErrMissingHeader: the request carries no service-signature header.
	ErrMissingHeader = errors.New("webhook: missing service-signature header")
	// ErrInvalidHeader: the header is not "t=<unix seconds>,v1=<hex>[,v1=<hex>...]".
	ErrInvalidHeader = errors.New("webhook: malformed service-signature header")
	// ErrTimestampTooOld: the signature is authentic but older than the tolerance, which
	// is what a replayed (or very late) delivery looks like. Check the receiver's clock.
	ErrTimestampTooOld = errors.New("webhook: signature timestamp is older than the tolerance")
	// ErrTimestampInFuture: the signature is authentic but dated beyond the tolerance
	// ahead of the receiver's clock. A clock is wrong somewhere.
	ErrTimestampInFuture = errors.New("webhook: signature timestamp is in the future beyond the tolerance")
	// ErrNoValidSignature: no v1 entry matches. Usually the wrong secret (it must include
	// the whsec_ prefix) or a body that was re-encoded instead of read raw.
	ErrNoValidSignature = errors.New("webhook: no v1 signature matches the body and secret")
)

// Verify checks the service-signature header of a delivery against its raw body and the
// endpoint's secret, using the current time and DefaultTolerance. It returns nil only
// for an authentic, fresh delivery.
func Verify(body []byte, header, secret string) error {
	return VerifyAt(body, header, secret, time.Now(), DefaultTolerance)
}

// VerifyAt is Verify with an explicit clock and tolerance, for tests and for receivers
// that queue requests before checking them. A tolerance <= 0 disables the time check
// (and with it the replay protection; use it only for stored, already-trusted bodies).
//
// The signature is checked before the timestamp, so ErrTimestampTooOld and
// ErrTimestampInFuture are only reported for deliveries that really come from the hub.
func VerifyAt(body []byte, header, secret string, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return ErrEmptySecret
	}
	if header == "" {
		return ErrMissingHeader
	}
	ts, sigs, err := parseHeader(header)
	if err != nil {
		return err
	}
	want := mac(secret, ts, body)
	ok := false
	for _, sig := range sigs {
		// Check every entry, without an early exit, so timing says nothing about which one matched.
		if hmac.Equal(sig, want) {
			ok = true
		}
	}
	if !ok {
		return ErrNoValidSignature
	}
	if tolerance <= 0 {
		return nil
	}
	secs, _ := strconv.ParseInt(ts, 10, 64) // parseHeader already validated it
	age := now.Sub(time.Unix(secs, 0))
	switch {
	case age > tolerance:
		return fmt.Errorf("%w: signed %s ago, tolerance %s", ErrTimestampTooOld, age.Truncate(time.Second), tolerance)
	case -age > tolerance:
		return fmt.Errorf("%w: signed %s ahead, tolerance %s", ErrTimestampInFuture, (-age).Truncate(time.Second), tolerance)
	}
	return nil
}

// parseHeader splits "t=<secs>,v1=<hex>,..." into the timestamp (kept as the exact text
// that was signed) and the decoded v1 signatures. Unknown schemes such as v0 are skipped
// so the hub can add new ones without breaking receivers; several v1 entries are allowed
// so a signature for a new secret can travel next to the old one.
func parseHeader(header string) (ts string, sigs [][]byte, err error) {
	haveT := false
	for part := range strings.SplitSeq(header, ",") {
		key, val, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return "", nil, fmt.Errorf("%w: %q is not key=value", ErrInvalidHeader, part)
		}
		switch key {
		case "t":
			if haveT {
				return "", nil, fmt.Errorf("%w: more than one t=", ErrInvalidHeader)
			}
			if !isUnixSeconds(val) {
				return "", nil, fmt.Errorf("%w: t=%q is not a Unix time in seconds", ErrInvalidHeader, val)
			}
			ts, haveT = val, true
		case "v1":
			sig, err := hex.DecodeString(val)
			if err != nil || len(sig) == 0 {
				return "", nil, fmt.Errorf("%w: v1=%q is not hex", ErrInvalidHeader, val)
			}
			sigs = append(sigs, sig)
		}
	}
	if !haveT {
		return "", nil, fmt.Errorf("%w: no t= timestamp", ErrInvalidHeader)
	}
	if len(sigs) == 0 {
		return "", nil, fmt.Errorf("%w: no v1= signature", ErrInvalidHeader)
	}
	return ts, sigs, nil
}

// isUnixSeconds accepts plain decimal digits that fit an int64: no sign, no spaces, so
// the text that is MACed is exactly the number the hub wrote.
func isUnixSeconds(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
