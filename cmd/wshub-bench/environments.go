package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wshub/wshub/client"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// B10: environments. A project whose setup fills a cached path with envFiles files
// (envBytes in all, random, so the cache's compression gains nothing) on the local
// provider: create-to-ready the first time (cold: the setup does the work, and the
// cache is saved) and then again (warm: the cache is restored and the setup finds its
// work done), with the caches in each blob store in turn.

const (
	envFiles   = 20000
	envBytes   = 200 << 20
	envCreates = 3 // warm creates after the cold one
)

// envSetup fills deps/ unless the cache brought it, and says which.
var envSetup = fmt.Sprintf(`if [ -e deps/.complete ]; then echo "deps restored from the cache"; exit 0; fi
mkdir -p deps && head -c %d /dev/urandom | split -b %d -a 5 - deps/f && touch deps/.complete && echo "deps installed"`,
	envBytes, envBytes/envFiles)

type envFigures struct {
	rows  []envRow
	notes []string
}

type envRow struct {
	store string
	cold  time.Duration
	warm  []time.Duration
}

// addEnvProject makes the repository of B10 (a lockfile and the environment) and adds
// it as a project.
func (r *run) addEnvProject(ctx context.Context, h *hub.Hub, accountID string) (string, error) {
	repo := filepath.Join(r.dataDir, "env")
	if err := os.MkdirAll(filepath.Join(repo, ".wshub"), 0o755); err != nil {
		return "", err
	}
	env := fmt.Sprintf(`{"setup": %q, "cache": [{"paths": ["deps"], "keyFiles": ["deps.lock"]}], "setupTimeout": 600}`, envSetup)
	for name, content := range map[string]string{".wshub/environment.json": env, "deps.lock": "v1\n"} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "environment"}} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %w: %s", args, err, out)
		}
	}
	none := core.NetworkNone
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: accountID, Repository: repo, Name: "env", Network: none})
	if err != nil {
		return "", err
	}
	return p.ID, h.Service.Admin.PrepareProject(ctx, p)
}

func (r *run) environments(ctx context.Context) error {
	stores := []blobStore{{name: "file"}, {name: "postgres"}}
	if s3, stop, err := r.s3Store(ctx); err != nil {
		r.envFigures.notes = append(r.envFigures.notes, "s3 not measured: "+err.Error())
	} else {
		defer stop()
		stores = append(stores, s3)
	}
	for _, s := range stores {
		row, err := r.envRow(ctx, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		r.envFigures.rows = append(r.envFigures.rows, row)
	}
	return nil
}

func (r *run) envRow(ctx context.Context, s blobStore) (envRow, error) {
	row := envRow{store: s.name}
	dir, err := os.MkdirTemp(r.dataDir, "b10-"+s.name+"-")
	if err != nil {
		return row, err
	}
	env := append([]string{"WSHUB_DATA_DIR=" + dir, "WSHUB_BLOBS=" + s.name, "WSHUB_AGENT_1_COMMAND=" + blobAgent, "WSHUB_MAX_ACTIVE_WORKSPACES=4",
		"WSHUB_WORKER_POLL=1s"}, s.env...)
	srv, err := r.serve(ctx, env...)
	if err != nil {
		return row, err
	}
	defer srv.stop()
	api, err := client.New(srv.url, r.key, client.WithHTTPClient(clientFor(4)))
	if err != nil {
		return row, err
	}
	for i := range envCreates + 1 {
		took, err := createReady(ctx, api, r.envProject, 1)
		if err != nil {
			return row, err
		}
		if i == 0 {
			row.cold = took[0]
		} else {
			row.warm = append(row.warm, took[0])
		}
	}
	fmt.Printf("B10 %s: create-to-ready cold %.0f ms, warm p50 %.0f ms\n", s.name, ms(row.cold), ms(pct(row.warm, 50)))
	return row, nil
}

func (f *envFigures) markdown(b *strings.Builder) {
	if len(f.rows) == 0 && len(f.notes) == 0 {
		return
	}
	b.WriteString("\n" + b10Begin + "\n\n## B10: environments\n\n")
	fmt.Fprintf(b, "A project on the `local` provider whose setup fills a cached path with %d files of random bytes "+
		"(%d MiB in all). Cold: the first workspace's create-to-ready (the setup does the work; the cache is saved before the "+
		"workspace is ready). Warm: %d more, one after another (the cache is restored before the setup, which finds its work "+
		"done). Target: warm at most a quarter of cold. Each `WSHUB_BLOBS` store in turn, one hub each.\n\n",
		envFiles, envBytes>>20, envCreates)
	b.WriteString("| store | cold ms | warm p50 ms | warm / cold |\n|---|---|---|---|\n")
	for _, x := range f.rows {
		w := pct(x.warm, 50)
		fmt.Fprintf(b, "| %s | %.0f | %.0f | %.2f |\n", x.store, ms(x.cold), ms(w), float64(w)/float64(x.cold))
	}
	for _, n := range f.notes {
		fmt.Fprintf(b, "\n%s\n", n)
	}
	b.WriteString("\n" + b10End + "\n")
}

const (
	b10Begin = "<!-- B10: written by make bench; `go run ./cmd/wshub-bench -only B10` rewrites this part alone -->"
	b10End   = "<!-- end of B10 -->"
)
