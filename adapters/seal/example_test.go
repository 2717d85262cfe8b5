package seal_test

import (
	"fmt"

	"github.com/wshub/wshub/adapters/seal"
)

// A value sealed for one owner does not open for another.
func Example() {
	s, err := seal.FromBase64("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	if err != nil {
		panic(err)
	}
	sealed, _ := s.Seal([]byte("hello"), "ws_1/msg_1")
	text, _ := s.Open(sealed, "ws_1/msg_1")
	_, err = s.Open(sealed, "ws_1/msg_2")
	fmt.Println(string(text), err)
	// Output: hello seal: message authentication failed
}
