package main

// wshub admin key create|list|revoke.

import (
	"context"
	"flag"
	"time"

	"github.com/wshub/wshub/core"
)

func keyCreate(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	name := fs.String("name", "", "key name")
	scopes := fs.String("scopes", "", "comma-separated scopes the key is limited to (none: every call)")
	projects := fs.String("projects", "", "comma-separated project ids the key is limited to (none: every project)")
	var expires timeFlag
	fs.Var(&expires, "expires", "when the key stops working (RFC3339; none: never)")
	return func(ctx context.Context, h adminHub) (any, error) {
		k, secret, err := h.svc.Admin.CreateLimitedAPIKey(ctx, core.NewKeyInput{AccountID: *id, Name: *name,
			Scopes: *scopes, Projects: *projects, ExpiresAt: expires.t})
		if err != nil {
			return nil, err
		}
		return keyCreated{Key: secret, KeyID: k.ID}, nil
	}
}

func keyList(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.Admin.ListAPIKeys(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := make([]keyOut, len(list))
		for i, k := range list {
			out[i] = keyOut{KeyID: k.ID, Name: k.Name, CreatedAt: k.CreatedAt.Format(time.RFC3339), Revoked: k.RevokedAt != nil,
				Projects: k.Limits.Projects}
			for _, sc := range k.Limits.Scopes {
				out[i].Scopes = append(out[i].Scopes, string(sc))
			}
			if k.Limits.ExpiresAt != nil {
				exp := k.Limits.ExpiresAt.UTC().Format(time.RFC3339)
				out[i].ExpiresAt = &exp
			}
			if k.RevokedAt != nil {
				out[i].RevokedAt = k.RevokedAt.Format(time.RFC3339)
			}
			if k.LastUsedAt != nil {
				used := k.LastUsedAt.UTC().Format(time.RFC3339)
				out[i].LastUsedAt = &used
			}
		}
		return out, nil
	}
}

func keyRevoke(fs *flag.FlagSet) adminRun {
	id := fs.String("key-id", "", "key id")
	return func(ctx context.Context, h adminHub) (any, error) {
		if err := h.svc.Admin.RevokeAPIKey(ctx, *id); err != nil {
			return nil, err
		}
		return keyRevoked{KeyID: *id, Revoked: true}, nil
	}
}

// keyCreated is what key create prints: the only time the key is shown.
type keyCreated struct {
	Key   string `json:"key"`
	KeyID string `json:"keyId"`
}

// keyOut is a key in key list: never the key itself.
type keyOut struct {
	CreatedAt  string   `json:"createdAt"`
	ExpiresAt  *string  `json:"expiresAt"` // null: never
	KeyID      string   `json:"keyId"`
	LastUsedAt *string  `json:"lastUsedAt"` // null: never used
	Name       string   `json:"name"`
	Projects   []string `json:"projects"` // null: every project
	Revoked    bool     `json:"revoked"`
	RevokedAt  string   `json:"revokedAt,omitempty"`
	Scopes     []string `json:"scopes"` // null: every scope
}

type keyRevoked struct {
	KeyID   string `json:"keyId"`
	Revoked bool   `json:"revoked"`
}
