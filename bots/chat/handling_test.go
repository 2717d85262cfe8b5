package chat

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

func TestTooManyFilesIsSaidAndNothingIsTaken(t *testing.T) {
	h := handlingOn(Discord)
	if h.TooManyFiles(place, core.MaxAttachments) || len(h.Said) != 0 {
		t.Fatalf("expected %d files taken without a word, got %+v", core.MaxAttachments, h.Said)
	}
	if !h.TooManyFiles(place, core.MaxAttachments+1) || len(h.Said) != 1 ||
		!strings.Contains(h.Said[0].Text, "at most 8 files; this one has 9.") || h.Said[0].Place != place {
		t.Fatalf("expected the limit said in the place, got %+v", h.Said)
	}
}
