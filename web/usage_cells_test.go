package web

import (
	"testing"
	"time"
)

func TestACellASpreadsheetWouldRunIsKeptAsText(t *testing.T) {
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": "'\rx",
		"Ada": "Ada", "": "", "a=b": "a=b", "1-2": "1-2",
	} {
		if got := spreadsheetSafe(in); got != want {
			t.Errorf("%q: expected %q, got %q", in, want, got)
		}
	}
}

func TestAgentTimeReadsInWords(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0 s", 1499 * time.Millisecond: "1 s", 150 * time.Second: "2 min 30 s", 65 * time.Minute: "1 h 5 min",
		50 * time.Hour: "50 h 0 min",
	} {
		if got := duration(d); got != want {
			t.Errorf("%s: expected %q, got %q", d, want, got)
		}
	}
}
