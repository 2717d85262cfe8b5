package hub_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// With WSHUB_BLOBS=postgres, hubs that share a database and no disk share attachments:
// a file uploaded to one replica reaches the agent of a turn run by another, and a
// file uploaded there is read here. Neither data directory holds any attachment.
func TestPostgresBlobsServeAttachmentsAcrossReplicasWithNoSharedDisk(t *testing.T) {
	t.Parallel()
	postgresBlobs := hubtest.WithConfig(func(c *hub.Config) { c.Blobs = hub.BlobsPostgres })
	h := startRuntime(t, postgresBlobs)
	other := h.Beside(t, func(c *hub.Config) { c.DataDir = t.TempDir() })
	id := createWorkspace(t, h, "")

	// Uploaded to the other replica; the turn runs on this one, where the checkout is.
	up := other.Call("POST", "/v1/api/workspaces/"+id+"/attachments", other.Key, []byte("line of notes"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	assetID := up.Body["asset"].(map[string]any)["assetId"].(string)
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "attachments", "attachments": []string{assetID}}).Expect(t, 200, "")
	waitFor(t, h, id, "idle", idleAfterTurns(1))
	msgs, _ := messages(t, h, id)
	if want := ".context/files/" + assetID + "-notes.txt=line of notes"; msgs[len(msgs)-1].Text != want {
		t.Fatalf("expected the agent here to read %q uploaded to the other replica, got %q", want, msgs[len(msgs)-1].Text)
	}

	// Uploaded here, read by the other replica.
	up = h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte("second file"),
		"Content-Type", "text/plain", "X-Service-File-Name", "second.txt").Expect(t, 201, "")
	second := up.Body["asset"].(map[string]any)["assetId"].(string)
	assets, err := other.PG().AssetsByID(context.Background(), id, []string{second})
	if err != nil || len(assets) != 1 {
		t.Fatalf("expected the asset's row, got %d (%v)", len(assets), err)
	}
	if got, err := other.Service.Admin.ReadAttachment(context.Background(), assets[0]); err != nil || string(got) != "second file" {
		t.Fatalf("expected the other replica to read %q, got %q (%v)", "second file", got, err)
	}

	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM blobs`); err != nil || n != 2 {
		t.Fatalf("expected both attachments in the blobs table, got %d (%v)", n, err)
	}
	for _, dir := range []string{h.Config.DataDir, other.Config.DataDir} {
		if _, err := os.Stat(filepath.Join(dir, "assets")); !os.IsNotExist(err) {
			t.Errorf("expected no assets directory under %s, got %v", dir, err)
		}
	}
}

// WSHUB_BLOBS names a store that is built, or the hub does not start: from the
// environment and from a Config built in code.
func TestAnUnknownBlobStoreIsRefused(t *testing.T) {
	t.Setenv("WSHUB_BLOBS", "")
	if c, err := hub.LoadConfig(); err != nil || c.Blobs != hub.BlobsFile {
		t.Fatalf("expected the file store by default, got %q (%v)", c.Blobs, err)
	}
	for _, name := range []string{"s3", "Postgres", "disk"} {
		t.Setenv("WSHUB_BLOBS", name)
		if _, err := hub.LoadConfig(); err == nil || !strings.Contains(err.Error(), `WSHUB_BLOBS: unknown blob store "`+name+`" (known: file, postgres)`) {
			t.Fatalf("expected WSHUB_BLOBS=%s refused naming the known stores, got %v", name, err)
		}
	}
	store, dbURL := pgtest.NewStore(t)
	cfg := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}, Blobs: "s3"}
	if _, err := hub.New(cfg, store, nil, hub.Options{Admin: true}); err == nil || !strings.Contains(err.Error(), `unknown blob store "s3"`) {
		t.Fatalf("expected the blob store s3 refused, got %v", err)
	}
}
