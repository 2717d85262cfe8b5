// Package seal encrypts content at rest with AES-256-GCM.
//
// Every sealed value is bound to the ids that own it (the binding string is the GCM
// additional data), so a sealed value copied onto another row does not open there.
// Every value names the key that sealed it, so keys can be rotated: a sealer holds the
// current key, which seals, and older keys, which only open (see Keyring).
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/wshub/wshub/core"
)

// KeySize is the length of an AES-256 key in bytes.
const KeySize = 32

// The leading byte of a sealed value says its layout:
//
//	version1: 0x01 || nonce (12) || ciphertext || tag (16)            (no key id; before rotation existed)
//	version2: 0x02 || key id (4) || nonce (12) || ciphertext || tag (16)
//
// Seal writes version2; Open reads both, trying every key on a version1 value.
const (
	version1 = 0x01
	version2 = 0x02
)

// Overhead is how many bytes Seal adds to a plaintext: version, key id, nonce and tag.
const Overhead = 1 + idSize + nonceSize + tagSize

const (
	idSize    = 4
	nonceSize = 12
	tagSize   = 16
)

// key is one AES-256-GCM key and the id that sealed values carry for it.
type key struct {
	id   uint32
	aead cipher.AEAD
}

// AESGCM seals values with AES-256-GCM and a random 96-bit nonce per value, under the
// first of its keys; it opens values sealed under any of them. It is safe for
// concurrent use.
type AESGCM struct {
	keys []key // keys[0] is current
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

// New returns a sealer for one 32-byte key. Shorter keys are refused rather than
// silently selecting AES-128 or AES-192.
func New(k []byte, opts ...Option) (*AESGCM, error) {
	return NewKeyring([][]byte{k}, opts...)
}

// NewKeyring returns a sealer that seals under keys[0] and opens values sealed under
// any of keys: the state of a hub in the middle of a key rotation.
func NewKeyring(keys [][]byte, opts ...Option) (*AESGCM, error) {
	if len(keys) == 0 {
		return nil, errors.New("seal: no key")
	}
	s := &AESGCM{rand: rand.Reader}
	seen := map[uint32]int{}
	for i, k := range keys {
		if len(k) != KeySize {
			return nil, fmt.Errorf("seal: key %d is %d bytes, want %d", i+1, len(k), KeySize)
		}
		id := KeyID(k)
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("seal: keys %d and %d are the same key (or share id %08x)", j+1, i+1, id)
		}
		seen[id] = i
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		s.keys = append(s.keys, key{id: id, aead: aead})
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// KeyID names a key in sealed values and in logs: the first four bytes of a SHA-256
// over a fixed label and the key. It identifies the key without revealing it.
func KeyID(k []byte) uint32 {
	h := sha256.Sum256(append([]byte("wshub content key id\x00"), k...))
	return binary.BigEndian.Uint32(h[:idSize])
}

// CurrentKeyID is the id of the key that seals, in the hex form logs and commands show.
func (s *AESGCM) CurrentKeyID() string { return formatID(s.keys[0].id) }

func formatID(id uint32) string {
	var b [idSize]byte
	binary.BigEndian.PutUint32(b[:], id)
	return hex.EncodeToString(b[:])
}

// Seal encrypts plaintext bound to binding under the current key. The result is
// version (0x02) || key id (4 bytes) || nonce (12 bytes) || ciphertext || tag (16 bytes).
func (s *AESGCM) Seal(plaintext []byte, binding string) ([]byte, error) {
	k := s.keys[0]
	out := make([]byte, 1+idSize+nonceSize, Overhead+len(plaintext))
	out[0] = version2
	binary.BigEndian.PutUint32(out[1:1+idSize], k.id)
	nonce := out[1+idSize:]
	if _, err := io.ReadFull(s.rand, nonce); err != nil {
		return nil, fmt.Errorf("seal: read nonce: %w", err)
	}
	return k.aead.Seal(out, nonce, plaintext, []byte(binding)), nil
}

// ErrOpen is returned when a sealed value does not authenticate: a wrong key, a
// wrong binding or tampered bytes. The three are indistinguishable by design.
var ErrOpen = errors.New("seal: message authentication failed")

// ErrUnknownKey is returned for a value sealed under a key the sealer does not hold:
// an old key dropped from WSHUB_CONTENT_KEYS before everything was re-sealed.
var ErrUnknownKey = errors.New("seal: sealed under a key this hub does not hold")

// Open decrypts a value made by Seal under any of the sealer's keys, with the same
// binding.
func (s *AESGCM) Open(sealed []byte, binding string) ([]byte, error) {
	return s.open(sealed, binding, false)
}

// OpenInPlace is Open writing the plaintext over sealed's own bytes, which are then no
// longer the sealed value: for a caller that reads many values once (a page of
// messages) and would otherwise allocate each plaintext only to copy it.
func (s *AESGCM) OpenInPlace(sealed []byte, binding string) ([]byte, error) {
	return s.open(sealed, binding, true)
}

func (s *AESGCM) open(sealed []byte, binding string, inPlace bool) ([]byte, error) {
	if len(sealed) < 1 {
		return nil, errors.New("seal: sealed value is empty")
	}
	switch sealed[0] {
	case version1:
		if len(sealed) < 1+nonceSize+tagSize {
			return nil, tooShort(len(sealed), 1+nonceSize+tagSize)
		}
		// Never in place: each key is tried in turn, and a failed try clears what it
		// was given to write to.
		nonce, ct := sealed[1:1+nonceSize], sealed[1+nonceSize:]
		for _, k := range s.keys {
			if pt, err := k.aead.Open(nil, nonce, ct, []byte(binding)); err == nil {
				return pt, nil
			}
		}
		return nil, ErrOpen
	case version2:
		if len(sealed) < Overhead {
			return nil, tooShort(len(sealed), Overhead)
		}
		id := binary.BigEndian.Uint32(sealed[1 : 1+idSize])
		nonce, ct := sealed[1+idSize:1+idSize+nonceSize], sealed[1+idSize+nonceSize:]
		var dst []byte
		if inPlace {
			dst = ct[:0]
		}
		for _, k := range s.keys {
			if k.id != id {
				continue
			}
			pt, err := k.aead.Open(dst, nonce, ct, []byte(binding))
			if err != nil {
				return nil, ErrOpen
			}
			return pt, nil
		}
		return nil, fmt.Errorf("%w (key id %s)", ErrUnknownKey, formatID(id))
	default:
		return nil, fmt.Errorf("seal: unknown sealed value version %#x", sealed[0])
	}
}

// Current reports whether sealed was sealed under the current key, so re-sealing can
// skip it. A version1 value never is: it carries no key id.
func (s *AESGCM) Current(sealed []byte) bool {
	return len(sealed) >= Overhead && sealed[0] == version2 &&
		binary.BigEndian.Uint32(sealed[1:1+idSize]) == s.keys[0].id
}

func tooShort(n, min int) error {
	return fmt.Errorf("seal: sealed value is %d bytes, shorter than the %d-byte minimum", n, min)
}
