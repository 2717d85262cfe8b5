package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// What is approved is what runs: an ask carries the tool's whole input, which is
// shown whole (the API event, the webhook event, the chat question and its attached
// file) and hashed; an Allow hands back exactly that input with its hash, and the
// agent side refuses an answer whose input does not match. The hash is over the
// canonical JSON of the input, so every hop (JSON re-encoded by the MCP SDK, the
// runtime API, the store) agrees on the same bytes.

// MaxApprovalInput bounds an ask's input, in bytes of its canonical JSON: a larger
// ask is denied without asking anyone, since it could not be shown whole.
const MaxApprovalInput = 64 << 10

// Who denied an ask that nobody was asked about, as the approval's decided_by.
const (
	decidedByLimit     = "hub:limit"     // the turn reached MaxApprovalsPerTurn
	decidedByTooLarge  = "hub:too_large" // the input is over MaxApprovalInput
	decidedByBadInput  = "hub:bad_input" // the input is not JSON
	decidedBySecret    = "hub:secret"    // the input holds a project secret's value
	reasonInputNotSame = "Denied: this request's input differs from the one asked about under the same id, which is the one that was shown."
)

// ReasonApprovalLimit is what an agent is told of an ask past MaxApprovalsPerTurn.
var ReasonApprovalLimit = fmt.Sprintf("Denied without asking anyone: this turn reached its limit of %d approval requests.", MaxApprovalsPerTurn)

// ReasonInputTooLarge is what an agent (and the event stream) is told of an ask whose
// input is over MaxApprovalInput.
var ReasonInputTooLarge = fmt.Sprintf("Denied without asking anyone: the tool's input is over %d bytes, too large to show whole for approval.", MaxApprovalInput)

// hubDenials words the denials the hub takes without asking anyone.
var hubDenials = map[string]string{
	decidedByLimit:    ReasonApprovalLimit,
	decidedByTooLarge: ReasonInputTooLarge,
	decidedByBadInput: "Denied without asking anyone: the tool's input is not valid JSON.",
	decidedBySecret:   "Denied without asking anyone: the tool's input holds the value of one of the project's secrets, which the hub never shows; use its variable instead.",
}

// CanonicalInput is the canonical JSON of a tool's input: compact, object keys
// sorted, numbers as written, no HTML escaping (<, >, & kept as they are).
func CanonicalInput(raw []byte) (json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("tool input: %w", err)
	}
	if d.More() {
		return nil, errors.New("tool input: more than one JSON value")
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, fmt.Errorf("tool input: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// InputHash is the hex sha256 of a canonical input.
func InputHash(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// SameInput reports whether raw, made canonical, hashes to sum.
func SameInput(raw []byte, sum string) bool {
	c, err := CanonicalInput(raw)
	return err == nil && sum != "" && InputHash(c) == sum
}
