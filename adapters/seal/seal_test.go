package seal

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func mustNew(t *testing.T, key []byte, opts ...Option) *AESGCM {
	t.Helper()
	s, err := New(key, opts...)
	if err != nil {
		t.Fatalf("New: expected no error, got %v", err)
	}
	return s
}

func TestRoundTrip(t *testing.T) {
	s := mustNew(t, testKey(7))
	tests := []struct {
		name      string
		plaintext []byte
		binding   string
	}{
		{"empty", nil, "msg_1"},
		{"text", []byte("hello, workspace"), "ws_1/msg_1"},
		{"empty binding", []byte("x"), ""},
		{"large", bytes.Repeat([]byte("abc"), 1<<16), "asset_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sealed, err := s.Seal(tt.plaintext, tt.binding)
			if err != nil {
				t.Fatalf("Seal: expected no error, got %v", err)
			}
			if want := len(tt.plaintext) + Overhead; len(sealed) != want {
				t.Errorf("sealed length: expected %d, got %d", want, len(sealed))
			}
			if sealed[0] != version2 {
				t.Errorf("version byte: expected %#x, got %#x", version2, sealed[0])
			}
			got, err := s.Open(sealed, tt.binding)
			if err != nil {
				t.Fatalf("Open: expected no error, got %v", err)
			}
			if !bytes.Equal(got, tt.plaintext) {
				t.Errorf("Open: expected %q, got %q", tt.plaintext, got)
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	s := mustNew(t, testKey(7))
	other := mustNew(t, testKey(8))
	sealed, err := s.Seal([]byte("secret text"), "ws_1/msg_1")
	if err != nil {
		t.Fatalf("Seal: expected no error, got %v", err)
	}
	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	unknownVersion := bytes.Clone(sealed)
	unknownVersion[0] = 0x03
	unknownKey := bytes.Clone(sealed)
	unknownKey[1] ^= 0xFF
	tests := []struct {
		name    string
		sealer  *AESGCM
		sealed  []byte
		binding string
		wantErr error // nil: any error
	}{
		{"wrong binding", s, sealed, "ws_1/msg_2", ErrOpen},
		{"empty binding", s, sealed, "", ErrOpen},
		{"wrong key", other, sealed, "ws_1/msg_1", ErrUnknownKey},
		{"tampered key id", s, unknownKey, "ws_1/msg_1", ErrUnknownKey},
		{"tampered nonce", s, flip(1 + idSize), "ws_1/msg_1", ErrOpen},
		{"tampered ciphertext", s, flip(1 + idSize + nonceSize), "ws_1/msg_1", ErrOpen},
		{"tampered tag", s, flip(len(sealed) - 1), "ws_1/msg_1", ErrOpen},
		{"truncated", s, sealed[:len(sealed)-1], "ws_1/msg_1", ErrOpen},
		{"unknown version", s, unknownVersion, "ws_1/msg_1", nil},
		{"too short", s, sealed[:Overhead-1], "ws_1/msg_1", nil},
		{"empty", s, nil, "ws_1/msg_1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.sealer.Open(tt.sealed, tt.binding)
			if err == nil {
				t.Fatalf("Open: expected an error, got plaintext %q", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Open: expected %v, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestEveryTamperedByteFails(t *testing.T) {
	s := mustNew(t, testKey(1))
	sealed, err := s.Seal([]byte("tamper me"), "b")
	if err != nil {
		t.Fatalf("Seal: expected no error, got %v", err)
	}
	for i := range sealed {
		b := bytes.Clone(sealed)
		b[i] ^= 0x80
		if got, err := s.Open(b, "b"); err == nil {
			t.Errorf("byte %d flipped: expected an error, got plaintext %q", i, got)
		}
	}
}

func TestOutputHidesPlaintext(t *testing.T) {
	s := mustNew(t, testKey(3))
	plaintext := []byte(strings.Repeat("the quick brown fox ", 20))
	for i := range 50 {
		sealed, err := s.Seal(plaintext, "binding")
		if err != nil {
			t.Fatalf("Seal: expected no error, got %v", err)
		}
		// No 8-byte window of the plaintext may appear in the output.
		for j := 0; j+8 <= len(plaintext); j++ {
			if bytes.Contains(sealed, plaintext[j:j+8]) {
				t.Fatalf("seal %d: expected no plaintext in output, found %q", i, plaintext[j:j+8])
			}
		}
	}
}

func TestNoncesAreFreshAndInjectable(t *testing.T) {
	s := mustNew(t, testKey(4))
	a, _ := s.Seal([]byte("same"), "b")
	b, _ := s.Seal([]byte("same"), "b")
	if bytes.Equal(a, b) {
		t.Errorf("two seals of one plaintext: expected different outputs, got equal %x", a)
	}

	nonce := bytes.Repeat([]byte{0xAB}, nonceSize)
	fixed := mustNew(t, testKey(4), WithRand(bytes.NewReader(nonce)))
	sealed, err := fixed.Seal([]byte("x"), "b")
	if err != nil {
		t.Fatalf("Seal: expected no error, got %v", err)
	}
	if got := sealed[1+idSize : 1+idSize+nonceSize]; !bytes.Equal(got, nonce) {
		t.Errorf("nonce: expected %x, got %x", nonce, got)
	}
	// The reader is now exhausted: Seal must fail rather than reuse a nonce.
	if _, err := fixed.Seal([]byte("x"), "b"); !errors.Is(err, io.EOF) {
		t.Errorf("Seal with exhausted reader: expected io.EOF, got %v", err)
	}
}

func TestNewKeySizes(t *testing.T) {
	tests := []struct {
		size    int
		wantErr bool
	}{
		{0, true}, {16, true}, {24, true}, {31, true}, {32, false}, {33, true}, {64, true},
	}
	for _, tt := range tests {
		_, err := New(make([]byte, tt.size))
		if gotErr := err != nil; gotErr != tt.wantErr {
			t.Errorf("New(%d-byte key): expected error=%v, got %v", tt.size, tt.wantErr, err)
		}
	}
}

func TestFromBase64(t *testing.T) {
	// 0xFB 0xFF… encodes with '+' and '/' in std and '-' and '_' in URL form, and 32
	// bytes leave one padding character, so every variant is distinct.
	key := bytes.Repeat([]byte{0xFB, 0xFF}, KeySize/2)
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"std padded", base64.StdEncoding.EncodeToString(key), false},
		{"std raw", base64.RawStdEncoding.EncodeToString(key), false},
		{"url padded", base64.URLEncoding.EncodeToString(key), false},
		{"url raw", base64.RawURLEncoding.EncodeToString(key), false},
		{"surrounding whitespace", " " + base64.StdEncoding.EncodeToString(key) + "\n", false},
		{"16 bytes", base64.StdEncoding.EncodeToString(key[:16]), true},
		{"33 bytes", base64.StdEncoding.EncodeToString(append(bytes.Clone(key), 0)), true},
		{"empty", "", true},
		{"not base64", "this is not base64!", true},
	}
	ref := mustNew(t, key)
	sealed, err := ref.Seal([]byte("payload"), "b")
	if err != nil {
		t.Fatalf("Seal: expected no error, got %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := FromBase64(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("FromBase64(%q): expected an error, got none", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromBase64(%q): expected no error, got %v", tt.in, err)
			}
			got, err := s.Open(sealed, "b")
			if err != nil || string(got) != "payload" {
				t.Errorf("Open with decoded key: expected %q, got %q (err %v)", "payload", got, err)
			}
		})
	}
}

func TestFromBase64ErrorHidesKey(t *testing.T) {
	in := base64.StdEncoding.EncodeToString([]byte("sixteen byte key"))
	_, err := FromBase64(in)
	if err == nil {
		t.Fatalf("FromBase64: expected an error, got none")
	}
	if strings.Contains(err.Error(), in) {
		t.Errorf("error: expected no key material, got %q", err)
	}
}
