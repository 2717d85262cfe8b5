package core

import "time"

// AcceptedMediaTypes is the upload list of api.md 4.6.
var AcceptedMediaTypes = []string{
	"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
	"application/pdf", "text/plain", "text/markdown", "application/json", "application/zip",
}

// Asset is an uploaded file of one workspace. Its bytes live sealed in the asset store.
type Asset struct {
	ID           string
	AccountID    string
	WorkspaceID  string
	MimeType     string
	OriginalName string
	SizeBytes    int64
	// BlobKey names the sealed bytes in the BlobStore.
	BlobKey string
	// SHA256 of the plaintext bytes; part of the upload idempotency fingerprint.
	SHA256    []byte
	CreatedAt time.Time
}
