package core

import (
	"strings"
	"unicode/utf8"
)

// CheckText refuses a value a front-end was sent that the hub would not keep as
// sent: a NUL character (PostgreSQL's text cannot hold one) or bytes that are not
// UTF-8 (which decoders would otherwise turn silently into U+FFFD). field names the
// value in the refusal.
func CheckText(field, v string) error {
	if strings.IndexByte(v, 0) >= 0 {
		return Errorf(CodeInvalidRequest, "%s holds a NUL character, which the hub does not accept", field)
	}
	if !utf8.ValidString(v) {
		return Errorf(CodeInvalidRequest, "%s is not valid UTF-8 text", field)
	}
	return nil
}
