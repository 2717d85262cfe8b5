package seal

import (
	"encoding/base64"
	"fmt"
	"strings"
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
