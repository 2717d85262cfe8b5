package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// sealForms are the ways a plaintext could show up in a row or a file: as is, and in
// the encodings PostgreSQL and JSON use for bytes.
func sealForms(plain []byte) [][]byte {
	return [][]byte{
		plain,
		[]byte(hex.EncodeToString(plain)),
		[]byte(base64.StdEncoding.EncodeToString(plain)),
		[]byte(base64.RawURLEncoding.EncodeToString(plain)),
	}
}

// sealAssertAbsent fails when data holds any form of any secret.
func sealAssertAbsent(t *testing.T, where string, data []byte, secrets map[string][]byte) {
	t.Helper()
	low := bytes.ToLower(data)
	for name, plain := range secrets {
		for _, form := range sealForms(plain) {
			if bytes.Contains(data, form) || bytes.Contains(low, bytes.ToLower(form)) {
				t.Errorf("%s contains the %s in plaintext (%.40q...)", where, name, form)
			}
		}
	}
}

func TestContentIsSealedAtRest(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()

	// Distinctive plaintexts, long enough that a chance match is impossible.
	prompt := "PROMPT-plaintext-" + strings.Repeat("p0", 40) + "-" + core.NewID(rand.Reader, "")
	text := "MESSAGE-plaintext-" + strings.Repeat("m1", 40) + "-" + core.NewID(rand.Reader, "")
	file := []byte("FILE-plaintext-" + strings.Repeat("f2", 4000) + "-" + core.NewID(rand.Reader, ""))

	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"prompt": prompt, "agent": "agent_1", "model": "m"},
		"Idempotency-Key", "seal-create").Expect(t, 201, "")
	wsID := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	wsPath := "/v1/api/workspaces/" + wsID

	r = h.Call("POST", wsPath+"/attachments", h.Key, file, "Content-Type", "text/plain", "X-Service-File-Name", "notes.txt",
		"Idempotency-Key", "seal-upload").Expect(t, 201, "")
	asset := r.Body["asset"].(map[string]any)
	assetID := asset["assetId"].(string)
	if asset["sizeBytes"] != float64(len(file)) {
		t.Fatalf("asset = %v, want sizeBytes %d", asset, len(file))
	}

	h.Call("POST", wsPath+"/messages", h.Key, map[string]any{"text": text, "attachments": []string{assetID}},
		"Idempotency-Key", "seal-send").Expect(t, 200, "")

	r = h.Call("POST", "/v1/api/webhooks", h.Key, map[string]any{"url": "https://hooks.example.com/seal", "description": "seal"}).Expect(t, 201, "")
	secret := r.Body["secret"].(string)
	webhookID := r.Body["webhook"].(map[string]any)["webhookId"].(string)

	keyRow, apiKey, err := h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "sealing")
	if err != nil {
		t.Fatal(err)
	}

	secrets := map[string][]byte{
		"prompt": []byte(prompt), "message text": []byte(text), "file bytes": file[:200],
		"webhook secret": []byte(secret), "webhook secret body": []byte(strings.TrimPrefix(secret, "whsec_")),
		"API key": []byte(apiKey), "API key body": []byte(strings.TrimPrefix(apiKey, "svc_")),
		"original API key": []byte(h.Key),
	}

	// The named columns, raw.
	db := h.PG().DB()
	var sealedTexts [][]byte
	if err := db.SelectContext(ctx, &sealedTexts, `SELECT text_sealed FROM messages WHERE workspace_id = $1 ORDER BY seq`, wsID); err != nil {
		t.Fatal(err)
	}
	if len(sealedTexts) != 2 {
		t.Fatalf("found %d message rows, want 2", len(sealedTexts))
	}
	for _, b := range sealedTexts {
		if len(b) <= seal.Overhead {
			t.Errorf("text_sealed is %d bytes: not a sealed value", len(b))
		}
		sealAssertAbsent(t, "messages.text_sealed", b, secrets)
	}
	var hashes [][]byte
	if err := db.SelectContext(ctx, &hashes, `SELECT hash FROM api_keys WHERE account_id = $1`, h.Account.ID); err != nil {
		t.Fatal(err)
	}
	if len(hashes) != 2 {
		t.Fatalf("found %d key rows, want 2", len(hashes))
	}
	for _, b := range hashes {
		if len(b) != 32 {
			t.Errorf("api_keys.hash is %d bytes, want a SHA-256", len(b))
		}
		sealAssertAbsent(t, "api_keys.hash", b, secrets)
	}
	var secretSealed []byte
	if err := db.GetContext(ctx, &secretSealed, `SELECT secret_sealed FROM webhooks WHERE id = $1`, webhookID); err != nil {
		t.Fatal(err)
	}
	sealAssertAbsent(t, "webhooks.secret_sealed", secretSealed, secrets)

	// Every row of every table, as text (bytea shows as hex there).
	var tables []string
	if err := db.SelectContext(ctx, &tables, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		var rows []string
		if err := db.SelectContext(ctx, &rows, `SELECT t::text FROM "`+table+`" t`); err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		sealAssertAbsent(t, "table "+table, []byte(strings.Join(rows, "\n")), secrets)
	}

	// The attachment blobs.
	assetsDir := filepath.Join(h.Config.DataDir, "assets")
	blobs := 0
	err = filepath.WalkDir(assetsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		blobs++
		if bytes.Contains(data, file[:64]) || bytes.Contains(data, file[len(file)-64:]) {
			t.Errorf("blob %s holds the file bytes in plaintext", p)
		}
		sealAssertAbsent(t, "blob "+p, data, secrets)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if blobs != 1 {
		t.Fatalf("found %d blob files under %s, want 1", blobs, assetsDir)
	}

	// The plaintexts still come back: through the API where api.md returns them...
	r = h.Call("GET", wsPath+"/messages", apiKey, nil).Expect(t, 200, "")
	msgs := r.Body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["text"] != prompt || msgs[1].(map[string]any)["text"] != text {
		t.Fatalf("messages do not carry the texts back: %.400s", r.Raw)
	}
	att, _ := msgs[1].(map[string]any)["attachments"].([]any)
	if len(att) != 1 || att[0].(map[string]any)["assetId"] != assetID || att[0].(map[string]any)["originalName"] != "notes.txt" {
		t.Fatalf("the message does not name its attachment: %.400s", r.Raw)
	}
	// ...the new key authenticates (only its hash is stored)...
	if keyRow.AccountID != h.Account.ID {
		t.Fatalf("key row belongs to %s", keyRow.AccountID)
	}
	// ...the file opens for the runtime...
	a, err := h.PG().GetAsset(ctx, wsID, assetID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Service.Admin.ReadAttachment(ctx, a)
	if err != nil || !bytes.Equal(got, file) {
		t.Fatalf("ReadAttachment = %d bytes, %v; want the uploaded file", len(got), err)
	}
	// ...and the stored secret opens with the content key to the one create returned.
	sealer, err := seal.FromBase64(h.Config.ContentKey)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := sealer.Open(secretSealed, "webhook:"+h.Account.ID+":"+webhookID)
	if err != nil || string(opened) != secret {
		t.Fatalf("sealed secret opens to %q, %v; want the secret create returned", opened, err)
	}
	// Sealed values are bound to their owner: the secret does not open as another webhook's.
	if _, err := sealer.Open(secretSealed, "webhook:"+h.Account.ID+":wh_0000000000000000"); err == nil {
		t.Fatal("a sealed secret opened under another webhook's binding")
	}
}
