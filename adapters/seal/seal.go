// Package seal encrypts content at rest with AES-256-GCM.
//
// Every sealed value is bound to the ids that own it (the binding string is the GCM
// additional data), so a sealed value copied onto another row does not open there.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"github.com/wshub/wshub/core"
)

// KeySize is the length of an AES-256 key in bytes.
const KeySize = 32

// version1 is the leading byte of every value sealed by this package. It leaves room
// to change the algorithm or nonce size later without guessing at the format.
const version1 = 0x01

// Overhead is how many bytes Seal adds to a plaintext: version, nonce and tag.
const Overhead = 1 + nonceSize + tagSize

const (
	nonceSize = 12
	tagSize   = 16
)

// AESGCM seals values with AES-256-GCM and a random 96-bit nonce per value.
// It is safe for concurrent use.
type AESGCM struct {
	aead cipher.AEAD
	rand io.Reader
}

var _ core.Sealer = (*AESGCM)(nil)

// Option configures an AESGCM.
type Option func(*AESGCM)

// WithRand sets the source of nonces. Production keeps the default (crypto/rand): a
// repeated nonce under one key breaks GCM, so only tests should inject a reader.
func WithRand(r io.Reader) Option {
	return func(s *AESGCM) { s.rand = r }
}

// New returns a sealer for a 32-byte key. Shorter keys are refused rather than
// silently selecting AES-128 or AES-192.
func New(key []byte, opts ...Option) (*AESGCM, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	s := &AESGCM{aead: aead, rand: rand.Reader}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Seal encrypts plaintext bound to binding. The result is
// version (0x01) || nonce (12 bytes) || ciphertext || tag (16 bytes).
func (s *AESGCM) Seal(plaintext []byte, binding string) ([]byte, error) {
	out := make([]byte, 1+nonceSize, Overhead+len(plaintext))
	out[0] = version1
	nonce := out[1 : 1+nonceSize]
	if _, err := io.ReadFull(s.rand, nonce); err != nil {
		return nil, fmt.Errorf("seal: read nonce: %w", err)
	}
	return s.aead.Seal(out, nonce, plaintext, []byte(binding)), nil
}

// ErrOpen is returned when a sealed value does not authenticate: a wrong key, a
// wrong binding or tampered bytes. The three are indistinguishable by design.
var ErrOpen = errors.New("seal: message authentication failed")

// Open decrypts a value made by Seal with the same key and binding.
func (s *AESGCM) Open(sealed []byte, binding string) ([]byte, error) {
	if len(sealed) < Overhead {
		return nil, fmt.Errorf("seal: sealed value is %d bytes, shorter than the %d-byte minimum", len(sealed), Overhead)
	}
	if sealed[0] != version1 {
		return nil, fmt.Errorf("seal: unknown sealed value version %#x", sealed[0])
	}
	nonce, ct := sealed[1:1+nonceSize], sealed[1+nonceSize:]
	pt, err := s.aead.Open(nil, nonce, ct, []byte(binding))
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}
