package main

// wshub admin key create|list|revoke.

import (
	"context"
	"flag"
	"time"
)

func keyCreate(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	name := fs.String("name", "", "key name")
	return func(ctx context.Context, h adminHub) (any, error) {
		k, secret, err := h.svc.CreateAPIKey(ctx, *id, *name)
		if err != nil {
			return nil, err
		}
		return map[string]string{"keyId": k.ID, "key": secret}, nil
	}
}

func keyList(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.AdminListAPIKeys(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(list))
		for i, k := range list {
			out[i] = map[string]any{"keyId": k.ID, "name": k.Name, "createdAt": k.CreatedAt.Format(time.RFC3339), "revoked": k.RevokedAt != nil}
			if k.RevokedAt != nil {
				out[i]["revokedAt"] = k.RevokedAt.Format(time.RFC3339)
			}
			out[i]["lastUsedAt"] = nil
			if k.LastUsedAt != nil {
				out[i]["lastUsedAt"] = k.LastUsedAt.UTC().Format(time.RFC3339)
			}
		}
		return out, nil
	}
}

func keyRevoke(fs *flag.FlagSet) adminRun {
	id := fs.String("key-id", "", "key id")
	return func(ctx context.Context, h adminHub) (any, error) {
		if err := h.svc.RevokeAPIKey(ctx, *id); err != nil {
			return nil, err
		}
		return map[string]any{"keyId": *id, "revoked": true}, nil
	}
}
