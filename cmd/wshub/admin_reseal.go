package main

// wshub admin reseal: re-sealing under the current content key.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// reseal re-seals every sealed value under the current content key while hubs run
// (docs/operations.md, key rotation). Progress goes to stderr as each kind finishes;
// the summary is JSON on stdout. It fails when any value did not open, after moving
// every other value: the summary names the ones left behind.
func reseal(fs *flag.FlagSet) adminRun {
	batch := &intIn{v: 500, min: 1, max: 10000}
	fs.Var(batch, "batch", "values per statement")
	return func(ctx context.Context, h adminHub) (any, error) {
		var kinds []core.ResealProgress
		err := h.svc.Admin.Reseal(ctx, batch.v, func(p core.ResealProgress) {
			kinds = append(kinds, p)
			fmt.Fprintf(h.progress, "%-16s scanned %d, resealed %d, already current %d, changed meanwhile %d, failed %d\n",
				p.Kind, p.Scanned, p.Resealed, p.Current, p.Changed, p.Failed)
		})
		if err != nil && !errors.Is(err, core.ErrResealIncomplete) {
			return nil, err
		}
		return resealed{KeyID: h.keyID, Kinds: kinds}, err
	}
}

// resealed is reseal's summary: the key everything is now under, and each kind's
// counts, with the values that did not open.
type resealed struct {
	KeyID string                `json:"keyId"`
	Kinds []core.ResealProgress `json:"kinds"`
}

// resealDataDir refuses a data directory that does not exist: reseal reads every
// attachment's bytes from it, so run with another one (WSHUB_DATA_DIR unset, say) it
// would find none, and it must not make an empty one.
func resealDataDir(cfg hub.Config) error {
	if fi, err := os.Stat(cfg.DataDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("the data directory %s does not exist; run with the hub's WSHUB_DATA_DIR", cfg.DataDir)
	}
	return nil
}
