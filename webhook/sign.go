// Package webhook is wshub's receiver kit: it signs and verifies the service-signature
// header of workspace.turn.completed deliveries (api.md section 6). The hub signs with
// Sign; receivers check with Verify or ConstructEvent, over the raw request body.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Header names and the user agent of every delivery (api.md 6.1).
const (
	HeaderSignature = "service-signature"
	HeaderEventID   = "service-event-id"
	HeaderAttempt   = "service-delivery-attempt"
	UserAgent       = "service-webhooks/1"
)

// Sign returns the service-signature header value for body sent at t:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the whole secret>".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

// mac is HMAC-SHA256(secret, ts + "." + body); the secret keeps its whsec_ prefix.
func mac(secret, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
