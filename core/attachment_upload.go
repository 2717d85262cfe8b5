package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode"
)

// UploadInput is one attachment upload: raw bytes and the headers that describe them.
type UploadInput struct {
	ContentType string
	FileName    *string // X-Service-File-Name
	HeaderKey   *string // Idempotency-Key (uploads take the header only)
	Body        []byte
}

type uploadRequest struct {
	MimeType string `json:"mimeType"`
	Name     string `json:"name"`
	SHA256   string `json:"sha256"`
}

// NormalizeMediaType lowercases a Content-Type and drops its parameters.
func NormalizeMediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// SanitizeFileName trims the name, keeps its last path component, removes control
// characters and cuts it to 255 characters; an empty result is "attachment".
func SanitizeFileName(name *string) string {
	if name == nil {
		return "attachment"
	}
	n := strings.ReplaceAll(strings.TrimSpace(*name), "\\", "/")
	n = path.Base(n)
	n = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\uFFFD' {
			return -1
		}
		return r
	}, n)
	n = strings.TrimSpace(n)
	if n == "." || n == ".." || n == "/" {
		n = ""
	}
	if r := []rune(n); len(r) > MaxFileNameChars {
		n = string(r[:MaxFileNameChars])
	}
	if n == "" {
		return "attachment"
	}
	return n
}

// ValidateUpload checks an upload (the 400s) without the store.
func ValidateUpload(in UploadInput) (uploadRequest, string, error) {
	var r uploadRequest
	mt := NormalizeMediaType(in.ContentType)
	if !slices.Contains(AcceptedMediaTypes, mt) {
		return r, "", Errorf(CodeUnsupportedAssetType, "media type %q is not accepted", truncateRunes(mt, 100))
	}
	if len(in.Body) == 0 || len(in.Body) > MaxAssetBytes {
		return r, "", Errorf(CodeInvalidAssetSize, "an attachment is 1 byte to 20 MiB")
	}
	key, err := IdempotencyKey(in.HeaderKey, nil)
	if err != nil {
		return r, "", err
	}
	sum := sha256.Sum256(in.Body)
	r = uploadRequest{MimeType: mt, Name: SanitizeFileName(in.FileName), SHA256: hex.EncodeToString(sum[:])}
	return r, key, nil
}

// UploadAttachment stores a file for a workspace. The sealed bytes go to the blob store
// first, under a key of their own (random per request), so a retry or a conflicting
// request never overwrites or deletes the original's bytes; the asset row and receipt
// follow in one transaction.
func (s *Workspaces) UploadAttachment(ctx context.Context, acct *Account, workspaceID string, in UploadInput) (*Asset, error) {
	req, key, err := ValidateUpload(in)
	if err != nil {
		return nil, err
	}
	ws, err := accountWorkspace(ctx, s.store, acct, workspaceID)
	if err != nil {
		return nil, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
	}
	if !ws.AcceptsMessages() {
		return nil, Errorf(CodeWorkspaceNotAcceptingMessages, "the workspace is %s and takes no uploads", ws.State)
	}
	now := s.clock.Now()
	asset := &Asset{
		ID: NewID(s.rand, PrefixAsset), AccountID: acct.ID, WorkspaceID: ws.ID, MimeType: req.MimeType,
		OriginalName: req.Name, SizeBytes: int64(len(in.Body)), CreatedAt: now,
	}
	asset.SHA256, _ = hex.DecodeString(req.SHA256)
	var claim *Receipt
	if key != "" {
		asset.ID = DerivedID(PrefixAsset, acct.ID, scopeUpload(ws.ID), key)
		claim = &Receipt{AccountID: acct.ID, Scope: scopeUpload(ws.ID), Key: key, Fingerprint: fingerprint(req), ResourceID: asset.ID, CreatedAt: now}
	}
	// Not derived from the content: a request reusing a key with the same bytes but
	// another name or type would share the original's blob and delete it on its 409.
	asset.BlobKey = asset.ID + "/" + NewID(s.rand, "")
	sealed, err := s.seal(in.Body, SealedAsset.binding(ws.ID, asset.ID))
	if err != nil {
		return nil, err
	}
	if err := s.blobs.Put(ctx, asset.BlobKey, sealed); err != nil {
		return nil, Errorf(CodeAssetStoreUnavailable, "the attachment store is unavailable; retry")
	}
	var result *Asset
	err = inTx(ctx, s.store, func(q Queries) error {
		result = nil
		if claim != nil {
			stored, replay, err := claimKey(ctx, q, claim, CodeIdempotencyKeyReusedAsset, "file",
				func(id string) error { return errOf(q.GetAsset(ctx, ws.ID, id)) })
			if err != nil {
				return err
			}
			if replay {
				result, err = q.GetAsset(ctx, ws.ID, stored.ResourceID)
				return err
			}
		}
		locked, err := lockAccountWorkspace(ctx, q, acct, ws.ID)
		if err != nil {
			return contended(notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account"))
		}
		if !locked.AcceptsMessages() {
			return Errorf(CodeWorkspaceNotAcceptingMessages, "the workspace is %s and takes no uploads", locked.State)
		}
		if err := q.InsertAsset(ctx, asset); err != nil {
			return err
		}
		result = asset
		return nil
	})
	if err != nil || result.BlobKey != asset.BlobKey {
		// Nothing references the bytes written above: fail open, an orphan blob is only space.
		_ = s.blobs.Delete(context.WithoutCancel(ctx), asset.BlobKey)
	}
	if err != nil {
		return nil, err
	}
	return result, nil
}

// ReadAttachment returns the plaintext bytes of an asset (runtime and chat use it).
func (s *Admin) ReadAttachment(ctx context.Context, a *Asset) ([]byte, error) {
	return readAttachment(ctx, s.kernel, s.blobs, a)
}

// readAttachment is ReadAttachment for the groups that hold the blob store.
func readAttachment(ctx context.Context, s kernel, blobs BlobStore, a *Asset) ([]byte, error) {
	sealed, err := blobs.Get(ctx, a.BlobKey)
	if err != nil {
		return nil, errors.Join(Errorf(CodeAssetStoreUnavailable, "the attachment store is unavailable"), err)
	}
	if err := s.requireSealer(); err != nil {
		return nil, err
	}
	return s.sealer.Open(sealed, SealedAsset.binding(a.WorkspaceID, a.ID))
}
