package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wshub/wshub/client"
)

// B9: where bytes live. Workspaces on the process provider (each a `wshub runtime`
// process talking to the hub over the runtime API), with their attachments and branch
// bundles in each blob store in turn: create-to-ready, a turn that commits (so its
// commits are taken, bundled and published), and a 20 MiB attachment from the start of
// its upload to the agent reading it.

// blobAgent writes a file for "write NAME", and for "attach" reads every attachment
// and says when it had (ns since the epoch).
const blobAgent = `set -- $(cat)
case "$1" in
write) echo "$2" > "$2.txt"; echo "wrote $2" ;;
attach) for f in $WSHUB_ATTACHMENTS; do cat "$f" >/dev/null; done; date +%s%N ;;
*) echo ok ;;
esac`

const (
	blobCreates     = 3
	blobTurns       = 10
	blobAttachments = 3
	blobAttachBytes = 20 << 20
)

type blobFigures struct {
	rows  []blobRow
	notes []string
}

type blobRow struct {
	store                string
	createToReady, turns []time.Duration
	attach               []time.Duration
}

// blobStore is one store as the hub is told it: its name and settings.
type blobStore struct {
	name string
	env  []string
}

func (r *run) blobStores(ctx context.Context) error {
	stores := []blobStore{{name: "file"}, {name: "postgres"}}
	if s3, stop, err := r.s3Store(ctx); err != nil {
		r.blobFigures.notes = append(r.blobFigures.notes, "s3 not measured: "+err.Error())
	} else {
		defer stop()
		stores = append(stores, s3)
	}
	for _, s := range stores {
		row, err := r.blobStoreRow(ctx, s)
		if err != nil {
			return fmt.Errorf("%s: %w%s", s.name, err, runtimeLogs(r.dataDir))
		}
		r.blobFigures.rows = append(r.blobFigures.rows, row)
	}
	return nil
}

func (r *run) blobStoreRow(ctx context.Context, s blobStore) (blobRow, error) {
	row := blobRow{store: s.name}
	dir, err := os.MkdirTemp(r.dataDir, "b9-"+s.name+"-")
	if err != nil {
		return row, err
	}
	bin, err := filepath.Abs(r.hubBin) // the runtimes start in their machines' directories
	if err != nil {
		return row, err
	}
	env := append([]string{"WSHUB_DATA_DIR=" + dir, "WSHUB_PROVIDERS=process", "WSHUB_RUNTIME_PROGRAM=" + bin,
		"WSHUB_BLOBS=" + s.name, "WSHUB_AGENT_1_COMMAND=" + blobAgent, "WSHUB_MAX_ACTIVE_WORKSPACES=8", "WSHUB_WORKER_POLL=1s"}, s.env...)
	srv, err := r.serve(ctx, env...)
	if err != nil {
		return row, err
	}
	defer killRuntimes(filepath.Join(dir, "machines")) // they outlive their hub by design
	defer srv.stop()
	api, err := client.New(srv.url, r.key, client.WithHTTPClient(clientFor(4)))
	if err != nil {
		return row, err
	}
	var ws string
	for range blobCreates {
		start := time.Now()
		w, err := api.CreateWorkspace(ctx, client.CreateWorkspaceRequest{ProjectID: r.tinyProject, Agent: "agent_1"})
		if err != nil {
			return row, err
		}
		if err := waitReady(ctx, api, w.WorkspaceID); err != nil {
			return row, err
		}
		row.createToReady = append(row.createToReady, time.Since(start))
		ws = w.WorkspaceID
	}
	for i := range blobTurns {
		reply, err := turn(ctx, api, ws, client.SendMessageRequest{Text: "write f" + strconv.Itoa(i)})
		if err != nil {
			return row, err
		}
		row.turns = append(row.turns, reply.Assistant.CreatedAt.Time().Sub(reply.Message.CreatedAt.Time()))
	}
	data := make([]byte, blobAttachBytes)
	if _, err := rand.Read(data); err != nil {
		return row, err
	}
	for range blobAttachments {
		start := time.Now()
		a, err := api.UploadAttachment(ctx, ws, client.Upload{Name: "big.txt", ContentType: "text/plain", Data: data})
		if err != nil {
			return row, err
		}
		reply, err := turn(ctx, api, ws, client.SendMessageRequest{Text: "attach", Attachments: []string{a.AssetID}})
		if err != nil {
			return row, err
		}
		read, err := strconv.ParseInt(strings.TrimSpace(reply.Assistant.Text), 10, 64)
		if err != nil {
			return row, fmt.Errorf("the agent's reply %q: %w", reply.Assistant.Text, err)
		}
		row.attach = append(row.attach, time.Unix(0, read).Sub(start))
	}
	fmt.Printf("B9 %s: create-to-ready p50 %.0f ms, turn p50 %.0f ms, 20 MiB attachment to the agent p50 %.0f ms\n",
		s.name, ms(pct(row.createToReady, 50)), ms(pct(row.turns, 50)), ms(pct(row.attach, 50)))
	return row, nil
}

// turn sends one message and waits for its reply, which must be a completed turn.
func turn(ctx context.Context, api *client.Client, ws string, req client.SendMessageRequest) (*client.Reply, error) {
	sent, err := api.SendMessage(ctx, ws, req)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	reply, err := api.WaitForReply(wctx, ws, sent.MessageID)
	if err != nil {
		return nil, err
	}
	if reply.Assistant == nil || reply.Failure != nil {
		return nil, fmt.Errorf("the turn of %q did not complete: %+v", req.Text, reply)
	}
	return reply, nil
}

// runtimeLogs is the end of each runtime's log under dir, for an error.
func runtimeLogs(dir string) string {
	logs, _ := filepath.Glob(filepath.Join(dir, "b9-*", "machines", "*", "runtime.log"))
	logs = append(logs, filepath.Join(dir, "hub.log"))
	var b strings.Builder
	for _, l := range logs {
		out, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "\n%s:\n%s", l, out[max(0, len(out)-2000):])
	}
	return b.String()
}

func (f *blobFigures) markdown(b *strings.Builder) {
	if len(f.rows) == 0 && len(f.notes) == 0 {
		return
	}
	b.WriteString("\n" + b9Begin + "\n\n## B9: where bytes live\n\n")
	fmt.Fprintf(b, "Workspaces on the `process` provider, their attachments and branch bundles in each `WSHUB_BLOBS` store in turn "+
		"(one hub, a data directory of its own per store). Create-to-ready: %d workspaces one after another. Turn: %d turns "+
		"that each commit a file, from the message's acceptance to its reply's (the commits taken, bundled since the base, "+
		"published and pushed nowhere). Attachment: a %d MiB upload, from its start to the agent having read it, %d times.\n\n",
		blobCreates, blobTurns, blobAttachBytes>>20, blobAttachments)
	b.WriteString("| store | create-to-ready p50 ms | turn p50 ms | turn max ms | 20 MiB attachment to the agent p50 ms |\n|---|---|---|---|---|\n")
	for _, x := range f.rows {
		fmt.Fprintf(b, "| %s | %.0f | %.0f | %.0f | %.0f |\n", x.store, ms(pct(x.createToReady, 50)), ms(pct(x.turns, 50)),
			ms(pct(x.turns, 100)), ms(pct(x.attach, 50)))
	}
	for _, n := range f.notes {
		fmt.Fprintf(b, "\n%s\n", n)
	}
	b.WriteString("\n" + b9End + "\n")
}

const (
	b9Begin = "<!-- B9: written by make bench; `go run ./cmd/wshub-bench -only B9` rewrites this part alone -->"
	b9End   = "<!-- end of B9 -->"
)
