package main

// wshub admin account create|update|list.

import (
	"context"
	"flag"
	"time"

	"github.com/wshub/wshub/core"
)

func accountCreate(fs *flag.FlagSet) adminRun {
	name := fs.String("name", "", "account name")
	entitled := fs.Bool("entitled", false, "the account has the cloud entitlement")
	hold := fs.Bool("billing-hold", false, "the account has a billing hold")
	metered := fs.Bool("metered", true, "the account pays by billing period (false: never checked)")
	var periodEnd timeFlag
	fs.Var(&periodEnd, "billing-period-end", "end of the current billing period (RFC3339)")
	return func(ctx context.Context, h adminHub) (any, error) {
		a := &core.Account{Name: *name, Entitled: *entitled, BillingHold: *hold, Metered: *metered, BillingPeriodEnd: periodEnd.t}
		if err := h.svc.Admin.CreateAccount(ctx, a); err != nil {
			return nil, err
		}
		return accountCreated{AccountID: a.ID}, nil
	}
}

func accountUpdate(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	var entitled, hold, metered optBool
	fs.Var(&entitled, "entitled", "the account has the cloud entitlement (true|false)")
	fs.Var(&hold, "billing-hold", "the account has a billing hold (true|false)")
	fs.Var(&metered, "metered", "the account pays by billing period (true|false)")
	periodEnd := timeFlag{orNone: true}
	fs.Var(&periodEnd, "billing-period-end", "end of the current billing period (RFC3339), or none")
	var maxWorkspaces, maxOpen, maxTurns, maxKeys optInt
	fs.Var(&maxWorkspaces, "max-workspaces", "quota: live workspaces of the account (-1: the hub's default, WSHUB_MAX_WORKSPACES)")
	fs.Var(&maxOpen, "max-open-messages", "quota: messages waiting in one workspace (-1: the hub's default, WSHUB_MAX_OPEN_MESSAGES)")
	provider := fs.String("provider", "", "provider of the account's workspaces whose create names none (none: the hub's default)")
	fs.Var(&maxTurns, "max-running-turns", "quota: turns of the account running at once; more wait their turn (-1: the hub's default, WSHUB_MAX_RUNNING_TURNS)")
	fs.Var(&maxKeys, "max-keys", "quota: API keys of the account, revoked ones not counted (-1: the hub's default, WSHUB_MAX_KEYS)")
	return func(ctx context.Context, h adminHub) (any, error) {
		u := core.AccountUpdate{Entitled: entitled.v, BillingHold: hold.v, Metered: metered.v,
			BillingPeriodEnd: periodEnd.t, ClearBillingPeriod: periodEnd.none,
			MaxWorkspaces: maxWorkspaces.v, MaxOpenMessages: maxOpen.v, MaxRunningTurns: maxTurns.v, MaxKeys: maxKeys.v}
		if flagGiven(fs, "provider") {
			p := *provider
			if p == "none" {
				p = ""
			}
			u.ProviderID = &p
		}
		a, err := h.svc.Admin.UpdateAccount(ctx, *id, u)
		if err != nil {
			return nil, err
		}
		return accountOf(a), nil
	}
}

func accountList(fs *flag.FlagSet) adminRun {
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.Admin.ListAccounts(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]accountOut, len(list))
		for i, a := range list {
			out[i] = accountOf(a)
		}
		return out, nil
	}
}

// accountCreated is what account create prints.
type accountCreated struct {
	AccountID string `json:"accountId"`
}

// accountOut is an account as the operator sees it.
type accountOut struct {
	AccountID        string `json:"accountId"`
	BillingHold      bool   `json:"billingHold"`
	BillingPeriodEnd string `json:"billingPeriodEnd,omitempty"`
	Entitled         bool   `json:"entitled"`
	// The quotas are absent when the hub's defaults apply; 0 is a quota.
	MaxKeys         *int   `json:"maxKeys,omitempty"`
	MaxOpenMessages *int   `json:"maxOpenMessages,omitempty"`
	MaxRunningTurns *int   `json:"maxRunningTurns,omitempty"`
	MaxWorkspaces   *int   `json:"maxWorkspaces,omitempty"`
	Metered         bool   `json:"metered"`
	Name            string `json:"name"`
	ProviderID      string `json:"providerId,omitempty"`
}

func accountOf(a *core.Account) accountOut {
	out := accountOut{AccountID: a.ID, Name: a.Name, Entitled: a.Entitled, BillingHold: a.BillingHold, Metered: a.Metered,
		MaxWorkspaces: a.MaxWorkspaces, MaxOpenMessages: a.MaxOpenMessages, MaxRunningTurns: a.MaxRunningTurns, MaxKeys: a.MaxKeys, ProviderID: a.ProviderID}
	if a.BillingPeriodEnd != nil {
		out.BillingPeriodEnd = a.BillingPeriodEnd.Format(time.RFC3339)
	}
	return out
}
