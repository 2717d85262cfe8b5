package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// reseal re-seals every sealed value under the current content key while hubs run
// (docs/operations.md, key rotation). Progress goes to stderr as each kind finishes;
// the summary is JSON on stdout. It exits 1 when any value did not open, after moving
// every other value: the summary names the ones left behind.
func reseal(ctx context.Context, h *hub.Hub, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("wshub admin reseal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	batch := fs.Int("batch", 500, "values per statement")
	if err := parse(fs, args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "wshub admin reseal: %v\n", err)
		}
		return 2
	}
	if *batch < 1 || *batch > 10000 {
		fmt.Fprintf(stderr, "wshub admin reseal: --batch must be between 1 and 10000\n")
		return 2
	}
	var kinds []core.ResealProgress
	err := h.Service.Admin.Reseal(ctx, *batch, func(p core.ResealProgress) {
		kinds = append(kinds, p)
		fmt.Fprintf(stderr, "%-16s scanned %d, resealed %d, already current %d, changed meanwhile %d, failed %d\n",
			p.Kind, p.Scanned, p.Resealed, p.Current, p.Changed, p.Failed)
	})
	if err != nil && !errors.Is(err, core.ErrResealIncomplete) {
		fmt.Fprintf(stderr, "wshub admin reseal: %v\n", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if eerr := enc.Encode(map[string]any{"keyId": h.ContentKeyID, "kinds": kinds}); eerr != nil {
		fmt.Fprintf(stderr, "wshub admin reseal: %v\n", eerr)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "wshub admin reseal: %v\n", err)
		return 1
	}
	return 0
}
