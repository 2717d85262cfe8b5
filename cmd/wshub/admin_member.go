package main

// wshub admin member add|remove|list: the people of an account. The operator names an
// account's first owner; owners manage the rest in the app.

import (
	"context"
	"errors"
	"flag"
	"net/url"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

// identityFlagNames are the four ways to name a person; a command takes exactly one.
var identityFlagNames = []string{"email", "slack", "discord", "oidc"}

// identityFlags declares the four ways to name a person and returns the one given.
func identityFlags(fs *flag.FlagSet) func() (core.Identity, error) {
	email := fs.String("email", "", "the person's email address")
	slack := fs.String("slack", "", "the person's Slack team and user ids, TEAM:USER")
	discord := fs.String("discord", "", "the person's Discord user id")
	oidc := fs.String("oidc", "", "the person's OpenID Connect issuer URL and subject, ISSUER:SUBJECT")
	return func() (core.Identity, error) {
		var given []core.Identity
		var err error
		for _, f := range []struct{ kind, value string }{
			{core.IdentityEmail, *email}, {core.IdentitySlack, *slack}, {core.IdentityDiscord, *discord}, {core.IdentityOIDC, *oidc},
		} {
			if f.value == "" {
				continue
			}
			id, e := core.NewIdentity(f.kind, f.value)
			err = errors.Join(err, e)
			given = append(given, id)
		}
		if err != nil {
			return core.Identity{}, err
		}
		return given[0], nil // exactly one: the command line was checked
	}
}

func memberAdd(fs *flag.FlagSet) adminRun {
	account := fs.String("account", "", "account id")
	identity := identityFlags(fs)
	role := fs.String("role", "", "owner or member")
	name := fs.String("name", "", "the person's display name, when the hub does not know them yet")
	return func(ctx context.Context, h adminHub) (any, error) {
		id, err := identity()
		if err != nil {
			return nil, err
		}
		r, err := core.ParseRole(*role)
		if err != nil {
			return nil, err
		}
		ms, err := h.svc.Admin.AddMember(ctx, *account, id, r, *name)
		if err != nil {
			return nil, err
		}
		return memberOutOf(ms), nil
	}
}

func memberRemove(fs *flag.FlagSet) adminRun {
	account := fs.String("account", "", "account id")
	identity := identityFlags(fs)
	return func(ctx context.Context, h adminHub) (any, error) {
		id, err := identity()
		if err != nil {
			return nil, err
		}
		if err := h.svc.Admin.RemoveMember(ctx, *account, id); err != nil {
			return nil, err
		}
		return memberRemoved{AccountID: *account, Identity: id.String(), Removed: true}, nil
	}
}

// forgeProfileBases are the forges whose address --forge-url may leave out.
var forgeProfileBases = map[string]string{core.ForgeGitHub: "https://github.com", core.ForgeGitLab: "https://gitlab.com"}

func memberLink(fs *flag.FlagSet) adminRun {
	account := fs.String("account", "", "account id")
	identity := identityFlags(fs)
	forge := fs.String("forge", "", "github, gitlab or gitea")
	login := fs.String("login", "", "the person's login on the forge")
	base := fs.String("forge-url", "", "the forge's address (default https://github.com or https://gitlab.com)")
	return func(ctx context.Context, h adminHub) (any, error) {
		id, err := identity()
		if err != nil {
			return nil, err
		}
		at := *base
		if at == "" {
			at = forgeProfileBases[*forge]
		}
		if !core.ValidForge(*forge) || at == "" {
			return nil, core.Errorf(core.CodeInvalidRequest, "--forge must be github, gitlab or gitea, and a gitea needs --forge-url")
		}
		link, err := core.NewIdentity(*forge, strings.TrimSuffix(at, "/")+"/"+url.PathEscape(*login))
		if err != nil {
			return nil, err
		}
		ms, err := h.svc.ForgeAdmin.LinkForgeLogin(ctx, *account, id, link)
		if err != nil {
			return nil, err
		}
		return memberOutOf(ms), nil
	}
}

func memberList(fs *flag.FlagSet) adminRun {
	account := fs.String("account", "", "account id")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.Admin.ListMembers(ctx, *account)
		if err != nil {
			return nil, err
		}
		out := make([]memberOut, len(list))
		for i, ms := range list {
			out[i] = memberOutOf(ms)
		}
		return out, nil
	}
}

func memberSignInLink(fs *flag.FlagSet) adminRun {
	account := fs.String("account", "", "account id")
	identity := identityFlags(fs)
	return func(ctx context.Context, h adminHub) (any, error) {
		id, err := identity()
		if err != nil {
			return nil, err
		}
		link, err := h.svc.Admin.SignInLink(ctx, *account, id)
		if err != nil {
			return nil, err
		}
		base := h.cfg.PublicURL
		if base == "" {
			base = devBase(h.cfg)
		}
		return signInLinkOut{AccountID: *account, ExpiresAt: link.Expires.UTC().Format(time.RFC3339),
			Link: signInURL(base, link.Token), MemberID: link.MemberID}, nil
	}
}

// signInLinkOut is what member signin-link prints: the link is shown this once.
type signInLinkOut struct {
	AccountID string `json:"accountId"`
	ExpiresAt string `json:"expiresAt"`
	Link      string `json:"link"`
	MemberID  string `json:"memberId"`
}

func memberOutOf(ms *core.Membership) memberOut {
	ids := make([]string, len(ms.Member.Identities))
	for i, id := range ms.Member.Identities {
		ids[i] = id.String()
	}
	return memberOut{AccountID: ms.AccountID, Identities: ids, JoinedAt: ms.CreatedAt.UTC().Format(time.RFC3339),
		MemberID: ms.Member.ID, Name: ms.Member.Name, Role: string(ms.Role)}
}

// memberOut is a member of an account as member add and member list print it.
type memberOut struct {
	AccountID  string   `json:"accountId"`
	Identities []string `json:"identities"`
	JoinedAt   string   `json:"joinedAt"`
	MemberID   string   `json:"memberId"`
	Name       string   `json:"name"`
	Role       string   `json:"role"`
}

type memberRemoved struct {
	AccountID string `json:"accountId"`
	Identity  string `json:"identity"`
	Removed   bool   `json:"removed"`
}
