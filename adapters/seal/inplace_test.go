package seal

import (
	"bytes"
	"errors"
	"testing"
)

// OpenInPlace opens what Open opens, a version 1 value under a keyring's older key
// included (each key tried in turn, so never in place), and refuses what Open refuses.
func TestOpenInPlaceOpensWhatOpenOpens(t *testing.T) {
	k1, k2 := testKey(1), testKey(2)
	ring, err := NewKeyring([][]byte{k2, k1})
	if err != nil {
		t.Fatal(err)
	}
	current, err := ring.Seal([]byte("sealed under key 2"), "b")
	if err != nil {
		t.Fatal(err)
	}
	older, err := mustNew(t, k1).Seal([]byte("sealed under key 1"), "b")
	if err != nil {
		t.Fatal(err)
	}
	legacy := sealV1(t, k1, []byte("sealed before key ids"), "b")
	for name, v := range map[string][]byte{"current": current, "older key": older, "version 1": legacy} {
		want, err := ring.Open(v, "b")
		if err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		if got, err := ring.OpenInPlace(bytes.Clone(v), "b"); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: expected %q, got %q, %v", name, want, got, err)
		}
		if _, err := ring.OpenInPlace(bytes.Clone(v), "other"); !errors.Is(err, ErrOpen) {
			t.Errorf("%s, another binding: expected ErrOpen, got %v", name, err)
		}
	}
}

// Opened in place, a value's text is written over its own bytes: the plaintext is no
// allocation of its own, where Open's is one.
func TestOpenInPlaceAllocatesNoPlaintext(t *testing.T) {
	s := mustNew(t, testKey(7))
	sealed, err := s.Seal(bytes.Repeat([]byte("a reply of ordinary length "), 10), "ws_1/msg_1")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(sealed))
	allocs := func(open func([]byte, string) ([]byte, error)) float64 {
		return testing.AllocsPerRun(100, func() {
			copy(buf, sealed)
			if _, err := open(buf, "ws_1/msg_1"); err != nil {
				t.Fatal(err)
			}
		})
	}
	opened, inPlace := allocs(s.Open), allocs(s.OpenInPlace)
	if inPlace >= opened {
		t.Fatalf("expected OpenInPlace to allocate less than Open's %v a value, got %v", opened, inPlace)
	}
	t.Logf("allocations a value: Open %v, OpenInPlace %v", opened, inPlace)
}
