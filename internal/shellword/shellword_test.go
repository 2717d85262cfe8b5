package shellword

import (
	"os/exec"
	"testing"
)

// What the shell makes of a quoted word is the value itself.
func TestQuoteIsTakenLiterally(t *testing.T) {
	for _, v := range []string{"", "plain", "it's", `a "b" $HOME \n` + "\nline", "'''", "*?[x]"} {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+Quote(v)).Output()
		if err != nil || string(out) != v {
			t.Errorf("Quote(%q): the shell read %q (%v)", v, out, err)
		}
	}
}
