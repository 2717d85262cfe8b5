package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Idempotency scopes: keys are scoped to the account, the endpoint and (for send and
// upload) the workspace.
func scopeCreate() string                 { return "create" }
func scopeSend(workspaceID string) string { return "send:" + workspaceID }
func scopeUpload(workspaceID string) string {
	return "upload:" + workspaceID
}

// IdempotencyKey resolves the key from the header and the body field (nil when absent):
// trimmed, 1..200 characters, no control characters; both given and different is a
// mismatch. It returns "" when neither is given.
func IdempotencyKey(header, body *string) (string, error) {
	var h, b string
	var err error
	if header != nil {
		if h, err = checkIdempotencyKey(*header); err != nil {
			return "", err
		}
	}
	if body != nil {
		if b, err = checkIdempotencyKey(*body); err != nil {
			return "", err
		}
	}
	if header != nil && body != nil && h != b {
		return "", Errorf(CodeIdempotencyKeyMismatch, "the Idempotency-Key header and the idempotencyKey field differ")
	}
	if header != nil {
		return h, nil
	}
	return b, nil
}

func checkIdempotencyKey(k string) (string, error) {
	k = strings.TrimSpace(k)
	n := utf8.RuneCountInString(k)
	if n == 0 || n > MaxIdempotencyKeyChars || !utf8.ValidString(k) {
		return "", Errorf(CodeInvalidIdempotencyKey, "the idempotency key must be 1 to 200 characters")
	}
	for _, r := range k {
		if unicode.IsControl(r) {
			return "", Errorf(CodeInvalidIdempotencyKey, "the idempotency key must not contain control characters")
		}
	}
	return k, nil
}

// fingerprint hashes what the caller sent (normalised), not the resolved defaults.
func fingerprint(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("fingerprint: " + err.Error()) // only plain structs are passed
	}
	sum := sha256.Sum256(b)
	return sum[:]
}

// chars counts Unicode code points, the unit of every text limit.
func chars(s string) int { return utf8.RuneCountInString(s) }

// keyOutlivedReceipt answers a key claimed afresh whose derived resource already
// exists (lookupErr is the lookup of that id): the key was used before and its receipt
// has since been pruned (receipts are kept at least 30 days, WSHUB_RETENTION). The id
// is derived from the key, so a new resource cannot take it, and the old request can
// no longer be told from a different one: the key is refused as reused.
func keyOutlivedReceipt(lookupErr error, code string) error {
	switch {
	case lookupErr == nil:
		return Errorf(code, "this idempotency key was used for an earlier request whose receipt has expired; use a new key")
	case errors.Is(lookupErr, ErrNoRows):
		return nil
	default:
		return lookupErr
	}
}

// claimKey claims an Idempotency-Key's receipt r in q's transaction. replay is true
// when the key was used before with the same request: the caller answers with the
// resource the stored receipt names. A key used before with another request (what
// says what differs) is refused with code, as is one whose receipt was pruned while
// its resource lives on (exists looks the resource up by id; ErrNoRows: none).
func claimKey(ctx context.Context, q ReceiptQueries, r *Receipt, code, what string, exists func(id string) error) (stored *Receipt, replay bool, err error) {
	stored, claimed, err := q.ClaimIdempotencyKey(ctx, r)
	if err != nil {
		return nil, false, err
	}
	if !claimed {
		if !bytes.Equal(stored.Fingerprint, r.Fingerprint) {
			return nil, false, Errorf(code, "this idempotency key was used with a different %s", what)
		}
		return stored, true, nil
	}
	return nil, false, keyOutlivedReceipt(exists(r.ResourceID), code)
}

// errOf keeps a lookup's error only.
func errOf[T any](_ T, err error) error { return err }

// ReceiptQueries are the store statements of Idempotency-Key receipts.
type ReceiptQueries interface {
	// ClaimIdempotencyKey inserts r unless (account, scope, key) exists; it waits for a
	// concurrent claim of the same key to finish and then returns the stored receipt.
	// claimed is true when r was inserted.
	ClaimIdempotencyKey(ctx context.Context, r *Receipt) (stored *Receipt, claimed bool, err error)
	SetReceiptResult(ctx context.Context, r *Receipt) error
}
