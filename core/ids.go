package core

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// ID prefixes (behaviour.md, identifiers).
const (
	PrefixAccount    = "acct_"
	PrefixKey        = "key_"
	PrefixProject    = "prj_"
	PrefixWorkspace  = "ws_"
	PrefixMessage    = "msg_"
	PrefixTurn       = "turn_"
	PrefixAsset      = "asset_"
	PrefixWebhook    = "wh_"
	PrefixEvent      = "evt_"
	PrefixApproval   = "apr_"
	PrefixMember     = "mem_"
	PrefixInvitation = "inv_"
	PrefixSchedule   = "sch_"
	PrefixAppSession = "as_"
	PrefixSession    = "wss_"
	PrefixAPIKey     = "svc_"
	PrefixSecret     = "whsec_"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// idChars is the length of the random part of every id.
const idChars = 16

// NewID returns prefix + 16 uniformly random base62 characters.
func NewID(r io.Reader, prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	buf := make([]byte, 32)
	for b.Len() < len(prefix)+idChars {
		if _, err := io.ReadFull(r, buf); err != nil {
			panic(fmt.Sprintf("read random: %v", err)) // crypto/rand does not fail
		}
		for _, c := range buf {
			if c < 248 && b.Len() < len(prefix)+idChars { // 248 = 4*62: no modulo bias
				b.WriteByte(base62[c%62])
			}
		}
	}
	return b.String()
}

// DerivedID returns a deterministic id for parts (account, scope, key, ...), so a
// retried request maps to the same row even across replicas.
func DerivedID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return prefix + encodeBase62(h.Sum(nil))[:idChars]
}

// encodeBase62 encodes 32 bytes as 43 base62 characters, left-padded with '0'.
func encodeBase62(b []byte) string {
	n := new(big.Int).SetBytes(b)
	s := n.Text(62) // big.Int uses 0-9a-zA-Z; map onto our alphabet for clarity
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
	if len(s) < 43 {
		s = strings.Repeat("0", 43-len(s)) + s
	}
	return s
}

// NewAPIKey returns a fresh key: svc_ + 43 base62 characters of 32 random bytes.
func NewAPIKey(r io.Reader) string {
	return PrefixAPIKey + encodeBase62(randomBytes(r, 32))
}

// NewSessionToken returns an app session's cookie token: wss_ + 43 base62 characters
// of 32 random bytes. The store keeps its hash only, as for a key.
func NewSessionToken(r io.Reader) string {
	return PrefixSession + encodeBase62(randomBytes(r, 32))
}

// NewWebhookSecret returns whsec_ + 43 base64url characters of 32 random bytes.
func NewWebhookSecret(r io.Reader) string {
	return PrefixSecret + base64.RawURLEncoding.EncodeToString(randomBytes(r, 32))
}

// HashAPIKey is the only form of a key the store keeps.
func HashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// TurnIDFor derives the turn id from the user message that starts the turn.
func TurnIDFor(messageID string) string {
	return PrefixTurn + strings.TrimPrefix(messageID, PrefixMessage)
}

// ValidID reports whether s is prefix + 16 base62 characters.
func ValidID(s, prefix string) bool {
	if len(s) != len(prefix)+idChars || !strings.HasPrefix(s, prefix) {
		return false
	}
	for _, c := range s[len(prefix):] {
		if !strings.ContainsRune(base62, c) {
			return false
		}
	}
	return true
}

func randomBytes(r io.Reader, n int) []byte {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		panic(fmt.Sprintf("read random: %v", err))
	}
	return b
}
