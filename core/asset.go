package core

import (
	"context"
	"time"
)

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

// AssetQueries are the store statements of attachments.
type AssetQueries interface {
	InsertAsset(ctx context.Context, a *Asset) error
	GetAsset(ctx context.Context, workspaceID, id string) (*Asset, error)
	// AssetBlobKeys lists the BlobStore keys of the workspace's attachments.
	AssetBlobKeys(ctx context.Context, workspaceID string) ([]string, error)
	// AssetsByID returns the assets among ids that belong to the workspace.
	AssetsByID(ctx context.Context, workspaceID string, ids []string) ([]*Asset, error)
}
