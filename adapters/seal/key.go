package seal

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
)

// FromBase64 builds a sealer from a key in configuration. Operators produce keys with
// whatever tool is at hand (openssl rand -base64 32, a URL-safe generator, a value with
// its padding stripped by a secret manager), so every common variant is accepted; the
// decoded key must still be exactly 32 bytes.
func FromBase64(s string, opts ...Option) (*AESGCM, error) {
	key, err := decodeKey(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	return New(key, opts...)
}

// FromKeyList builds a sealer from WSHUB_CONTENT_KEYS: keys separated by commas or
// white space, the current key first and older keys after it, kept only to open what
// they sealed until `wshub admin reseal` has re-sealed it.
func FromKeyList(list string, opts ...Option) (*AESGCM, error) {
	fields := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(fields) == 0 {
		return nil, fmt.Errorf("seal: no key in the list")
	}
	keys := make([][]byte, len(fields))
	for i, f := range fields {
		k, err := decodeKey(f)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		keys[i] = k
	}
	return NewKeyring(keys, opts...)
}

// decodeKey tries the standard and URL alphabets, padded and unpadded. The error
// never echoes the input: it is a secret.
func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding,
		base64.URLEncoding, base64.RawURLEncoding,
	} {
		if key, err := enc.DecodeString(s); err == nil {
			return key, nil
		}
	}
	return nil, fmt.Errorf("seal: key is not valid base64")
}
