package api_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

func attPath(wsID string) string { return "/v1/api/workspaces/" + wsID + "/attachments" }

// attUpload posts raw bytes with a media type and extra header pairs.
func attUpload(t testing.TB, h *hubtest.Hub, key, wsID, contentType string, body []byte, headers ...string) *hubtest.Response {
	t.Helper()
	return msgsCall(t, h, "POST", attPath(wsID), key, body, append([]string{"Content-Type", contentType}, headers...)...)
}

// attAsset checks a 201 upload answer and returns its asset.
func attAsset(t testing.TB, r *hubtest.Response) map[string]any {
	t.Helper()
	r.Expect(t, 201, "")
	if got := msgsKeys(r.Body); !slices.Equal(got, []string{"asset"}) {
		t.Fatalf("expected only an asset field, got %v in %s", got, r.Raw)
	}
	a, ok := r.Body["asset"].(map[string]any)
	if !ok {
		t.Fatalf("expected an asset object, got %s", r.Raw)
	}
	if got := msgsKeys(a); !slices.Equal(got, []string{"assetId", "mimeType", "originalName", "sizeBytes"}) {
		t.Fatalf("expected asset fields [assetId mimeType originalName sizeBytes], got %v", got)
	}
	if id, _ := a["assetId"].(string); !core.ValidID(id, core.PrefixAsset) {
		t.Fatalf("expected assetId asset_ + 16 base62, got %v", a["assetId"])
	}
	return a
}

// attStored reads the bytes the hub keeps for an asset (opened with its key).
func attStored(t testing.TB, h *hubtest.Hub, wsID, assetID string) []byte {
	t.Helper()
	var a core.Asset
	if err := h.PG().DB().QueryRowx(`SELECT id, workspace_id, mime_type, original_name, size_bytes, blob_key
		FROM assets WHERE workspace_id = $1 AND id = $2`, wsID, assetID).
		Scan(&a.ID, &a.WorkspaceID, &a.MimeType, &a.OriginalName, &a.SizeBytes, &a.BlobKey); err != nil {
		t.Fatalf("read asset row %s: %v", assetID, err)
	}
	b, err := h.Service.Admin.ReadAttachment(context.Background(), &a)
	if err != nil {
		t.Fatalf("read asset bytes %s: %v", assetID, err)
	}
	return b
}

func attCount(t testing.TB, h *hubtest.Hub, wsID string) int {
	t.Helper()
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM assets WHERE workspace_id = $1`, wsID); err != nil {
		t.Fatalf("count assets: %v", err)
	}
	return n
}

// attRaw writes a hand-made request on a new connection (head is everything up to and
// including the blank line) and reads the answer. body, when given, is written on its
// own goroutine, so an answer that comes before the body is read is seen as such.
func attRaw(t testing.TB, h *hubtest.Hub, head string, body io.Reader) *hubtest.Response {
	t.Helper()
	u, _ := url.Parse(h.URL)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatalf("write head: %v", err)
	}
	if body != nil {
		go func() { _, _ = io.Copy(conn, body) }() // the server may answer and close first
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer (did the server wait for a body it should refuse?): %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := &hubtest.Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if err := json.Unmarshal(raw, &r.Body); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %.200s", err, raw)
	}
	return r
}

func attHead(h *hubtest.Hub, wsID, key string, lines ...string) string {
	u, _ := url.Parse(h.URL)
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", attPath(wsID), u.Host)
	if key != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", key)
	}
	for _, l := range lines {
		b.WriteString(l + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	return b.String()
}

func TestUploadAttachmentMediaTypes(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := msgsWorkspace(t, h, h.Key, "")
	cases := []struct{ sent, want string }{
		{"image/png", "image/png"},
		{"image/jpeg", "image/jpeg"},
		{"image/gif", "image/gif"},
		{"image/webp", "image/webp"},
		{"image/avif", "image/avif"},
		{"application/pdf", "application/pdf"},
		{"text/plain", "text/plain"},
		{"text/markdown", "text/markdown"},
		{"application/json", "application/json"},
		{"application/zip", "application/zip"},
		{"Text/Plain; charset=utf-8", "text/plain"},
		{"IMAGE/PNG", "image/png"},
		{"application/json;charset=UTF-8", "application/json"},
		{"text/markdown; charset=utf-8; variant=GFM", "text/markdown"},
		{" image/webp ", "image/webp"},
	}
	for _, tc := range cases {
		t.Run(tc.sent, func(t *testing.T) {
			t.Parallel()
			body := []byte("bytes of " + tc.sent + "\x00\xff")
			a := attAsset(t, attUpload(t, h, h.Key, ws, tc.sent, body))
			if a["mimeType"] != tc.want || a["originalName"] != "attachment" || a["sizeBytes"] != float64(len(body)) {
				t.Fatalf("expected %s attachment %d bytes, got %v", tc.want, len(body), a)
			}
			if got := attStored(t, h, ws, a["assetId"].(string)); !bytes.Equal(got, body) {
				t.Fatalf("expected the stored bytes to be %q, got %q", body, got)
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		for _, ct := range []string{"image/svg+xml", "text/html", "application/octet-stream", "image/png2",
			"text/plain/extra", "application/x-zip-compressed", "multipart/form-data; boundary=x", "", ";", "image"} {
			r := attUpload(t, h, h.Key, ws, ct, []byte("x"))
			if r.Status != 400 || r.Code() != "unsupported_asset_type" {
				t.Fatalf("%q: expected 400 unsupported_asset_type, got %d %s", ct, r.Status, r.Raw)
			}
		}
		// A form is not parsed (nor refused by the HTTP layer ahead of authentication).
		attRaw(t, h, attHead(h, ws, "", "Content-Type: multipart/form-data; boundary=x", "Content-Length: 3"),
			strings.NewReader("bad")).Expect(t, 401, "missing_api_key")
		// No Content-Type header at all.
		r := attRaw(t, h, attHead(h, ws, h.Key, "Content-Length: 1"), strings.NewReader("x"))
		if r.Status != 400 || r.Code() != "unsupported_asset_type" {
			t.Fatalf("no Content-Type: expected 400 unsupported_asset_type, got %d %s", r.Status, r.Raw)
		}
	})
}

func TestUploadAttachmentSize(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := msgsWorkspace(t, h, h.Key, "")
	const limit = 20 * 1024 * 1024
	if core.MaxAssetBytes != limit {
		t.Fatalf("expected the limit to be 20,971,520 bytes, got %d", core.MaxAssetBytes)
	}

	t.Run("empty body", func(t *testing.T) {
		t.Parallel()
		attUpload(t, h, h.Key, ws, "text/plain", []byte{}).Expect(t, 400, "invalid_asset_size")
		r := attRaw(t, h, attHead(h, ws, h.Key, "Content-Type: text/plain", "Content-Length: 0"), nil)
		if r.Status != 400 || r.Code() != "invalid_asset_size" {
			t.Fatalf("expected 400 invalid_asset_size, got %d %s", r.Status, r.Raw)
		}
	})

	t.Run("exactly 20 MiB", func(t *testing.T) {
		t.Parallel()
		body := bytes.Repeat([]byte("0123456789abcdef"), limit/16)
		body[limit-1] = '!'
		a := attAsset(t, attUpload(t, h, h.Key, ws, "application/zip", body, "X-Service-File-Name", "big.zip"))
		if a["sizeBytes"] != float64(limit) || a["originalName"] != "big.zip" {
			t.Fatalf("expected big.zip of %d bytes, got %v", limit, a)
		}
		if got := attStored(t, h, ws, a["assetId"].(string)); !bytes.Equal(got, body) {
			t.Fatalf("expected the stored bytes to equal the 20 MiB sent, got %d bytes", len(got))
		}
	})

	t.Run("one byte more is refused before the body is read", func(t *testing.T) {
		t.Parallel()
		// Only the head is sent: the answer must come without waiting for the body.
		head := attHead(h, ws, h.Key, "Content-Type: application/zip", fmt.Sprintf("Content-Length: %d", limit+1))
		attRaw(t, h, head, nil).Expect(t, 400, "invalid_asset_size")
	})

	t.Run("one byte more, body streamed", func(t *testing.T) {
		t.Parallel()
		head := attHead(h, ws, h.Key, "Content-Type: application/zip", fmt.Sprintf("Content-Length: %d", limit+1))
		attRaw(t, h, head, bytes.NewReader(make([]byte, limit+1))).Expect(t, 400, "invalid_asset_size")
	})

	t.Run("one byte more, chunked", func(t *testing.T) {
		t.Parallel()
		head := attHead(h, ws, h.Key, "Content-Type: application/zip", "Transfer-Encoding: chunked")
		var body bytes.Buffer
		chunk := make([]byte, 1<<20)
		for sent := 0; sent <= limit; sent += len(chunk) {
			fmt.Fprintf(&body, "%x\r\n", len(chunk))
			body.Write(chunk)
			body.WriteString("\r\n")
		}
		body.WriteString("0\r\n\r\n")
		// fasthttp resets the request when the chunked body passes the limit; the head
		// kept before the body was read (internal/httpfront/head.go) still says it was an upload.
		r := attRaw(t, h, head, &body)
		if r.Status != 400 || r.Code() != "invalid_asset_size" {
			t.Fatalf("expected 400 invalid_asset_size, got %d %s", r.Status, r.Raw)
		}
	})

	t.Run("authentication comes first", func(t *testing.T) {
		t.Parallel()
		_, unentitled := h.NewAccount(false)
		for _, c := range []struct {
			key, code string
			status    int
		}{
			{"", "missing_api_key", 401},
			{"svc_unknown", "invalid_api_key", 401},
			{unentitled, "cloud_entitlement_required", 403},
		} {
			head := attHead(h, ws, c.key, "Content-Type: application/zip", fmt.Sprintf("Content-Length: %d", limit+1))
			r := attRaw(t, h, head, nil)
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("key %q, oversized body: expected %d %s, got %d %s", c.key, c.status, c.code, r.Status, r.Raw)
			}
		}
	})

	t.Cleanup(func() {
		if n := attCount(t, h, ws); n != 1 {
			t.Errorf("expected only the 20 MiB upload to be stored, got %d assets", n)
		}
	})
}

func TestUploadAttachmentFileName(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := msgsWorkspace(t, h, h.Key, "")
	cases := []struct {
		name string
		sent *string
		want string
	}{
		{"absent", nil, "attachment"},
		{"plain", attPtr("report.pdf"), "report.pdf"},
		{"trimmed", attPtr("  notes.md \t"), "notes.md"},
		{"parent directories", attPtr("../../etc/passwd"), "passwd"},
		{"absolute path", attPtr("/var/tmp/x.png"), "x.png"},
		{"windows path", attPtr(`C:\Users\me\Desktop\plan.txt`), "plan.txt"},
		{"trailing slash", attPtr("dir/sub/"), "sub"},
		{"only dots", attPtr(".."), "attachment"},
		{"only a slash", attPtr("/"), "attachment"},
		{"tab removed", attPtr("a\tb.txt"), "ab.txt"},
		{"C1 control removed", attPtr("a\u0085b\u009f.txt"), "ab.txt"},
		{"unicode kept", attPtr("résumé 日本.pdf"), "résumé 日本.pdf"},
		{"white space only", attPtr(" \t  "), "attachment"},
		{"empty", attPtr(""), "attachment"},
		{"300 characters", attPtr(strings.Repeat("a", 300)), strings.Repeat("a", 255)},
		{"255 characters", attPtr(strings.Repeat("b", 255)), strings.Repeat("b", 255)},
		{"300 multibyte characters", attPtr(strings.Repeat("é", 300)), strings.Repeat("é", 255)},
		{"long path", attPtr(strings.Repeat("d/", 200) + "f.txt"), "f.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hdr []string
			if tc.sent != nil {
				hdr = []string{"X-Service-File-Name", *tc.sent}
			}
			a := attAsset(t, attUpload(t, h, h.Key, ws, "text/plain", []byte("x"), hdr...))
			if a["originalName"] != tc.want {
				t.Fatalf("expected originalName %q, got %q", tc.want, a["originalName"])
			}
		})
	}

	t.Run("raw control bytes", func(t *testing.T) {
		t.Parallel()
		// Go's client refuses to send these; a hand-made request carries them.
		head := attHead(h, ws, h.Key, "Content-Type: text/plain", "Content-Length: 1",
			"X-Service-File-Name: a\x01b\x1bc\x7fd.txt")
		a := attAsset(t, attRaw(t, h, head, strings.NewReader("x")))
		if a["originalName"] != "abcd.txt" {
			t.Fatalf("expected originalName %q, got %q", "abcd.txt", a["originalName"])
		}
	})
}

func attPtr[T any](v T) *T { return &v }

func TestUploadAttachmentIdempotency(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)

	t.Run("replay gives the same asset", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		first := attUpload(t, h, h.Key, ws, "text/plain", []byte("hello"), "Idempotency-Key", "up1", "X-Service-File-Name", "a.txt")
		a := attAsset(t, first)
		for _, hdr := range [][]string{
			{"Idempotency-Key", "up1", "X-Service-File-Name", "a.txt"},
			{"Idempotency-Key", " up1 ", "X-Service-File-Name", " a.txt"},
		} {
			r := attUpload(t, h, h.Key, ws, "Text/Plain; charset=utf-8", []byte("hello"), hdr...)
			if got := attAsset(t, r); got["assetId"] != a["assetId"] || !bytes.Equal(r.Raw, first.Raw) {
				t.Fatalf("expected the replay to answer 201 %s, got %d %s", first.Raw, r.Status, r.Raw)
			}
		}
		if n := attCount(t, h, ws); n != 1 {
			t.Fatalf("expected one stored asset, got %d", n)
		}
		if got := attStored(t, h, ws, a["assetId"].(string)); string(got) != "hello" {
			t.Fatalf("expected the stored bytes to stay %q, got %q", "hello", got)
		}
		// A different key is a different asset.
		b := attAsset(t, attUpload(t, h, h.Key, ws, "text/plain", []byte("hello"), "Idempotency-Key", "up2", "X-Service-File-Name", "a.txt"))
		if b["assetId"] == a["assetId"] {
			t.Fatalf("expected a new asset for a new key, got %v again", b["assetId"])
		}
	})

	t.Run("different file with the key", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		a := attAsset(t, attUpload(t, h, h.Key, ws, "text/plain", []byte("one"), "Idempotency-Key", "k", "X-Service-File-Name", "f.txt"))
		for _, c := range []struct {
			name, ct, file string
			body           []byte
		}{
			{"other bytes", "text/plain", "f.txt", []byte("two")},
			{"other media type", "text/markdown", "f.txt", []byte("one")},
			{"other name", "text/plain", "g.txt", []byte("one")},
		} {
			r := attUpload(t, h, h.Key, ws, c.ct, c.body, "Idempotency-Key", "k", "X-Service-File-Name", c.file)
			if r.Status != 409 || r.Code() != "idempotency_key_reused_with_different_asset" {
				t.Fatalf("%s: expected 409 idempotency_key_reused_with_different_asset, got %d %s", c.name, r.Status, r.Raw)
			}
		}
		if n := attCount(t, h, ws); n != 1 {
			t.Fatalf("expected one stored asset, got %d", n)
		}
		if got := attStored(t, h, ws, a["assetId"].(string)); string(got) != "one" {
			t.Fatalf("expected the original bytes to be kept, got %q", got)
		}
	})

	t.Run("concurrent uploads with one key make one asset", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		const n = 12
		results := h.TryAll(t, n, "POST", attPath(ws), h.Key, []byte("same"),
			"Content-Type", "text/plain", "Idempotency-Key", "race", "X-Service-File-Name", "r.txt")
		for i := range n {
			if results[i].Status != 201 || !bytes.Equal(results[i].Raw, results[0].Raw) {
				t.Fatalf("expected every answer to be 201 %s, got %d %s", results[0].Raw, results[i].Status, results[i].Raw)
			}
		}
		id := attAsset(t, results[0])["assetId"].(string)
		if c := attCount(t, h, ws); c != 1 {
			t.Fatalf("expected one stored asset, got %d", c)
		}
		if got := attStored(t, h, ws, id); string(got) != "same" {
			t.Fatalf("expected the stored bytes to be %q, got %q", "same", got)
		}
		// The losers' bytes are cleaned up: one blob remains for the asset.
		files, err := filepath.Glob(filepath.Join(h.Config.DataDir, "assets", id, "*"))
		if err != nil || len(files) != 1 {
			t.Fatalf("expected one blob file for %s, got %v (%v)", id, files, err)
		}
	})

	t.Run("invalid keys", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		for _, k := range []string{strings.Repeat("k", 201), strings.Repeat("é", 201), "   "} {
			attUpload(t, h, h.Key, ws, "text/plain", []byte("x"), "Idempotency-Key", k).Expect(t, 400, "invalid_idempotency_key")
		}
		attAsset(t, attUpload(t, h, h.Key, ws, "text/plain", []byte("x"), "Idempotency-Key", strings.Repeat("é", 200)))
		if n := attCount(t, h, ws); n != 1 {
			t.Fatalf("expected one stored asset, got %d", n)
		}
	})

	t.Run("keys are scoped to the workspace", func(t *testing.T) {
		t.Parallel()
		a, b := msgsWorkspace(t, h, h.Key, ""), msgsWorkspace(t, h, h.Key, "")
		x := attAsset(t, attUpload(t, h, h.Key, a, "text/plain", []byte("x"), "Idempotency-Key", "shared"))
		y := attAsset(t, attUpload(t, h, h.Key, b, "text/plain", []byte("y"), "Idempotency-Key", "shared"))
		if x["assetId"] == y["assetId"] {
			t.Fatalf("expected independent assets, got %v twice", x["assetId"])
		}
	})
}

func TestUploadAttachmentWorkspace(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)

	t.Run("not found", func(t *testing.T) {
		t.Parallel()
		mine := msgsWorkspace(t, h, h.Key, "")
		otherAcct, otherKey := h.NewAccount(true)
		h.NewProject(otherAcct.ID, hubtest.GitRepo(t))
		theirs := msgsWorkspace(t, h, otherKey, "")
		for _, c := range []struct{ name, key, ws string }{
			{"unknown", h.Key, "ws_0000000000000000"},
			{"malformed", h.Key, "nope"},
			{"other account's", h.Key, theirs},
			{"mine for the other account", otherKey, mine},
		} {
			r := attUpload(t, h, c.key, c.ws, "text/plain", []byte("x"))
			if r.Status != 404 || r.Code() != "cloud_workspace_not_found" {
				t.Fatalf("%s: expected 404 cloud_workspace_not_found, got %d %s", c.name, r.Status, r.Raw)
			}
		}
		// Validation comes before the lookup.
		attUpload(t, h, h.Key, "ws_0000000000000000", "image/svg+xml", []byte("x")).Expect(t, 400, "unsupported_asset_type")
		if n := attCount(t, h, mine) + attCount(t, h, theirs); n != 0 {
			t.Fatalf("expected no asset stored, got %d", n)
		}
	})

	t.Run("states", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			state  string
			status int
			code   string
		}{
			{"queued", 201, ""}, {"provisioning", 201, ""}, {"setup", 201, ""}, {"ready", 201, ""},
			{"pausing", 201, ""}, {"paused", 201, ""}, {"resuming", 201, ""},
			{"archiving", 409, "workspace_not_accepting_messages"},
			{"archived", 409, "workspace_not_accepting_messages"},
			{"deleting", 409, "workspace_not_accepting_messages"},
			{"failed", 409, "workspace_not_accepting_messages"},
			{"deleted", 404, "cloud_workspace_not_found"},
		} {
			ws := msgsWorkspace(t, h, h.Key, "")
			msgsSetState(t, h, ws, c.state)
			r := attUpload(t, h, h.Key, ws, "text/plain", []byte("x"), "Idempotency-Key", "k")
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("%s: expected %d %s, got %d %s", c.state, c.status, c.code, r.Status, r.Raw)
			}
			g := msgsCall(t, h, "GET", "/v1/api/workspaces/"+ws, h.Key, nil)
			if c.state != "deleted" && g.Body["workspace"].(map[string]any)["state"] != c.state {
				t.Fatalf("%s: expected an upload to leave the state alone, got %s", c.state, g.Raw)
			}
		}
	})

	t.Run("billing is not checked on upload", func(t *testing.T) {
		t.Parallel()
		acct, key := h.NewAccount(true)
		h.NewProject(acct.ID, hubtest.GitRepo(t))
		ws := msgsWorkspace(t, h, key, "")
		yes := true
		if _, err := h.Service.Admin.UpdateAccount(context.Background(), acct.ID, core.AccountUpdate{BillingHold: &yes}); err != nil {
			t.Fatal(err)
		}
		attAsset(t, attUpload(t, h, key, ws, "text/plain", []byte("x")))
		msgsCall(t, h, "POST", msgsPath(ws), key, map[string]any{"text": "x"}).Expect(t, 403, "cloud_billing_hold")
	})

	t.Run("unreadable body", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		r := attUpload(t, h, h.Key, ws, "text/plain", []byte("not gzip at all"), "Content-Encoding", "gzip")
		if r.Status != 400 || r.Code() != "invalid_asset_body" {
			t.Fatalf("expected 400 invalid_asset_body, got %d %s", r.Status, r.Raw)
		}
		if n := attCount(t, h, ws); n != 0 {
			t.Fatalf("expected no asset stored, got %d", n)
		}
	})

	t.Run("encoded bodies are not expanded", func(t *testing.T) {
		t.Parallel()
		// The body is the file's bytes as sent; a content encoding is refused rather than
		// expanded in memory (20 KiB of gzip here would become 20 MiB, 20 MiB 20 GiB).
		ws := msgsWorkspace(t, h, h.Key, "")
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(make([]byte, core.MaxAssetBytes+1))
		_ = zw.Close()
		for _, enc := range []string{"gzip", "deflate", "br", "GZIP", "gzip, identity"} {
			r := attUpload(t, h, h.Key, ws, "application/zip", gz.Bytes(), "Content-Encoding", enc)
			if r.Status != 400 || r.Code() != "invalid_asset_body" {
				t.Fatalf("%s: expected 400 invalid_asset_body, got %d %s", enc, r.Status, r.Raw)
			}
		}
		a := attAsset(t, attUpload(t, h, h.Key, ws, "application/zip", gz.Bytes(), "Content-Encoding", "identity"))
		if got := attStored(t, h, ws, a["assetId"].(string)); !bytes.Equal(got, gz.Bytes()) {
			t.Fatalf("expected identity bytes to be stored as sent, got %d bytes", len(got))
		}
		if n := attCount(t, h, ws); n != 1 {
			t.Fatalf("expected only the identity upload to be stored, got %d", n)
		}
	})
}

func TestUploadAttachmentWithoutContentKey(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithoutContentKey())
	ws := msgsWorkspace(t, h, h.Key, "")
	attUpload(t, h, h.Key, ws, "text/plain", []byte("x")).Expect(t, 503, "api_content_encryption_not_configured")
	attUpload(t, h, h.Key, ws, "text/plain", []byte("x"), "Idempotency-Key", "k").Expect(t, 503, "api_content_encryption_not_configured")
	attUpload(t, h, h.Key, ws, "image/svg+xml", []byte("x")).Expect(t, 400, "unsupported_asset_type")
	attUpload(t, h, h.Key, "ws_0000000000000000", "text/plain", []byte("x")).Expect(t, 404, "cloud_workspace_not_found")
	msgsSetState(t, h, ws, "archived")
	attUpload(t, h, h.Key, ws, "text/plain", []byte("x")).Expect(t, 409, "workspace_not_accepting_messages")
	if n := attCount(t, h, ws); n != 0 {
		t.Fatalf("expected no asset stored, got %d", n)
	}
}

func TestSendMessageWithAttachments(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := msgsWorkspace(t, h, h.Key, "prompt")
	upload := func(ws, name, ct string, body string) map[string]any {
		t.Helper()
		return attAsset(t, attUpload(t, h, h.Key, ws, ct, []byte(body), "X-Service-File-Name", name))
	}
	var assets []map[string]any
	var ids []string
	for i := range 9 {
		a := upload(ws, fmt.Sprintf("f%d.md", i), "text/markdown", strings.Repeat("x", i+1))
		assets = append(assets, a)
		ids = append(ids, a["assetId"].(string))
	}

	t.Run("assets in the order sent", func(t *testing.T) {
		order := []int{2, 0, 1}
		sent := []string{ids[2], ids[0], ids[1], ids[0], ids[2]} // duplicates count once
		_, seq, _, _ := msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "see files", "attachments": sent}))
		msgs, _ := msgsList(t, h, h.Key, ws, fmt.Sprintf("afterSeq=%d", int64(seq)-1))
		if len(msgs) != 1 {
			t.Fatalf("expected one message, got %v", msgs)
		}
		got, _ := msgs[0]["attachments"].([]any)
		if len(got) != len(order) {
			t.Fatalf("expected %d attachments, got %v", len(order), msgs[0]["attachments"])
		}
		for i, k := range order {
			if a, _ := got[i].(map[string]any); !attMapsEqual(a, assets[k]) {
				t.Fatalf("expected attachment %d to be %v, got %v", i, assets[k], got[i])
			}
		}
	})

	t.Run("empty text with attachments", func(t *testing.T) {
		_, seq, _, _ := msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "  ", "attachments": []string{ids[3]}}))
		msgs, _ := msgsList(t, h, h.Key, ws, fmt.Sprintf("afterSeq=%d", int64(seq)-1))
		if len(msgs) != 1 || msgs[0]["text"] != "" || len(msgs[0]["attachments"].([]any)) != 1 {
			t.Fatalf("expected an empty text with one attachment, got %v", msgs)
		}
	})

	t.Run("eight distinct, each twice", func(t *testing.T) {
		sent := append(slices.Clone(ids[:8]), ids[:8]...)
		_, seq, _, _ := msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "eight", "attachments": sent}))
		msgs, _ := msgsList(t, h, h.Key, ws, fmt.Sprintf("afterSeq=%d", int64(seq)-1))
		got := msgs[0]["attachments"].([]any)
		if len(got) != 8 {
			t.Fatalf("expected 8 attachments, got %d", len(got))
		}
		for i := range 8 {
			if got[i].(map[string]any)["assetId"] != ids[i] {
				t.Fatalf("expected attachment %d to be %s, got %v", i, ids[i], got[i])
			}
		}
	})

	t.Run("nine distinct", func(t *testing.T) {
		msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "nine", "attachments": ids}).Expect(t, 400, "invalid_message")
	})

	t.Run("asset of another workspace or account", func(t *testing.T) {
		other := msgsWorkspace(t, h, h.Key, "")
		foreign := upload(other, "o.txt", "text/plain", "o")["assetId"].(string)
		acct, key := h.NewAccount(true)
		h.NewProject(acct.ID, hubtest.GitRepo(t))
		theirsWS := msgsWorkspace(t, h, key, "")
		theirs := attAsset(t, attUpload(t, h, key, theirsWS, "text/plain", []byte("t")))["assetId"].(string)
		for name, list := range map[string][]string{
			"other workspace":    {ids[0], foreign},
			"other account":      {theirs},
			"never uploaded":     {"asset_0000000000000000"},
			"mine, on their key": nil,
		} {
			if list == nil {
				r := msgsCall(t, h, "POST", msgsPath(theirsWS), key, map[string]any{"text": "x", "attachments": []string{ids[0]}})
				if r.Status != 404 || r.Code() != "api_asset_not_found" {
					t.Fatalf("%s: expected 404 api_asset_not_found, got %d %s", name, r.Status, r.Raw)
				}
				continue
			}
			r := msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "x", "attachments": list})
			if r.Status != 404 || r.Code() != "api_asset_not_found" {
				t.Fatalf("%s: expected 404 api_asset_not_found, got %d %s", name, r.Status, r.Raw)
			}
		}
		// The asset check comes before the state check.
		msgsSetState(t, h, other, "archived")
		msgsCall(t, h, "POST", msgsPath(other), h.Key, map[string]any{"text": "x", "attachments": []string{ids[0]}}).
			Expect(t, 404, "api_asset_not_found")
		msgsCall(t, h, "POST", msgsPath(other), h.Key, map[string]any{"text": "x", "attachments": []string{foreign}}).
			Expect(t, 409, "workspace_not_accepting_messages")
	})

	t.Run("idempotent send with attachments", func(t *testing.T) {
		body := map[string]any{"text": "files", "attachments": []string{ids[4], ids[5]}}
		first := msgsCall(t, h, "POST", msgsPath(ws), h.Key, body, "Idempotency-Key", "att")
		msgsReceipt(t, first)
		dup := map[string]any{"text": "files", "attachments": []string{ids[4], ids[5], ids[4]}}
		if r := msgsCall(t, h, "POST", msgsPath(ws), h.Key, dup, "Idempotency-Key", "att"); !bytes.Equal(r.Raw, first.Raw) {
			t.Fatalf("expected duplicates to replay %s, got %d %s", first.Raw, r.Status, r.Raw)
		}
		swapped := map[string]any{"text": "files", "attachments": []string{ids[5], ids[4]}}
		msgsCall(t, h, "POST", msgsPath(ws), h.Key, swapped, "Idempotency-Key", "att").
			Expect(t, 409, "idempotency_key_reused_with_different_request")
	})
}

func attMapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
