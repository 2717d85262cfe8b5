package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// sealV1 builds a value in the layout hubs wrote before keys carried ids, so the
// upgrade path is tested against real bytes rather than this package's own writer.
func sealV1(t *testing.T, k []byte, plaintext []byte, binding string) []byte {
	t.Helper()
	block, err := aes.NewCipher(k)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	nonce := bytes.Repeat([]byte{0x42}, nonceSize)
	return aead.Seal(append([]byte{version1}, nonce...), nonce, plaintext, []byte(binding))
}

func TestRotation(t *testing.T) {
	k1, k2 := testKey(1), testKey(2)
	before := mustNew(t, k1)
	old, err := before.Seal([]byte("sealed under key 1"), "b")
	if err != nil {
		t.Fatal(err)
	}
	legacy := sealV1(t, k1, []byte("sealed before key ids"), "b")

	ring, err := NewKeyring([][]byte{k2, k1})
	if err != nil {
		t.Fatalf("NewKeyring: expected no error, got %v", err)
	}
	for name, v := range map[string][]byte{"key 1": old, "version 1": legacy} {
		if got, err := ring.Open(v, "b"); err != nil || !strings.HasPrefix(string(got), "sealed") {
			t.Errorf("ring opens %s value: expected the plaintext, got %q (err %v)", name, got, err)
		}
		if ring.Current(v) {
			t.Errorf("Current(%s value) under key 2: expected false, got true", name)
		}
	}
	fresh, err := ring.Seal([]byte("sealed under key 2"), "b")
	if err != nil {
		t.Fatal(err)
	}
	if !ring.Current(fresh) {
		t.Errorf("Current(fresh value): expected true, got false")
	}
	if _, err := before.Open(fresh, "b"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("key-1-only sealer opens key-2 value: expected ErrUnknownKey, got %v", err)
	}
	// Key 1 dropped: what it sealed no longer opens, and the error says why.
	after := mustNew(t, k2)
	if _, err := after.Open(old, "b"); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), formatID(KeyID(k1))) {
		t.Errorf("dropped key: expected ErrUnknownKey naming key id %s, got %v", formatID(KeyID(k1)), err)
	}
	if got, err := after.Open(fresh, "b"); err != nil || string(got) != "sealed under key 2" {
		t.Errorf("key 2 value after dropping key 1: expected the plaintext, got %q (err %v)", got, err)
	}
	if _, err := after.Open(legacy, "b"); !errors.Is(err, ErrOpen) {
		t.Errorf("version 1 value without its key: expected ErrOpen, got %v", err)
	}
}

func TestNewKeyringRefuses(t *testing.T) {
	if _, err := NewKeyring(nil); err == nil {
		t.Errorf("no keys: expected an error, got none")
	}
	if _, err := NewKeyring([][]byte{testKey(1), testKey(1)}); err == nil {
		t.Errorf("one key twice: expected an error, got none")
	}
	if _, err := NewKeyring([][]byte{testKey(1), make([]byte, 16)}); err == nil {
		t.Errorf("a short second key: expected an error, got none")
	}
}

func TestFromKeyList(t *testing.T) {
	k1, k2 := base64.StdEncoding.EncodeToString(testKey(1)), base64.RawURLEncoding.EncodeToString(testKey(2))
	for _, in := range []string{k2 + "," + k1, k2 + ", " + k1 + "\n", " " + k2 + "\n" + k1} {
		s, err := FromKeyList(in)
		if err != nil {
			t.Fatalf("FromKeyList(%q): expected no error, got %v", in, err)
		}
		if got, want := s.CurrentKeyID(), formatID(KeyID(testKey(2))); got != want {
			t.Errorf("FromKeyList(%q) current key: expected %s, got %s", in, want, got)
		}
		if len(s.keys) != 2 {
			t.Errorf("FromKeyList(%q): expected 2 keys, got %d", in, len(s.keys))
		}
	}
	for _, in := range []string{"", " , ", k1 + ",not base64!"} {
		_, err := FromKeyList(in)
		if err == nil {
			t.Errorf("FromKeyList(%q): expected an error, got none", in)
		} else if strings.Contains(err.Error(), k1) {
			t.Errorf("FromKeyList error: expected no key material, got %q", err)
		}
	}
}
