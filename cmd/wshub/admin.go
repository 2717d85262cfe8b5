package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

const adminUsage = `usage: wshub admin <command>

  account create --name N [--entitled] [--billing-hold] [--metered=BOOL] [--billing-period-end RFC3339]
  account update --account ID [--entitled=BOOL] [--billing-hold=BOOL] [--metered=BOOL] [--billing-period-end RFC3339|none]
                 [--max-workspaces N] [--max-open-messages N] [--max-running-turns N] [--provider ID|none]
  account list
  key create --account ID --name N
  key list --account ID
  key revoke --key-id ID
  project add --account ID --repository URL|PATH [--name N] [--default-branch B] [--push] [--network full|none|host]
  project update --project ID [--name N] [--default-branch B] [--push=BOOL] [--network full|none|host]
  project refresh --project ID
  project remove --project ID [--force]
  project list --account ID
  workspace archive|unarchive|delete --workspace ID
  webhook deliveries --account ID [--status pending|delivered|failed] [--limit N]
  webhook redeliver --delivery ID
  slack bind --team T --account ID [--project P] [--agent X --model M] [--runtime-mode MODE] [--provider ID]
  discord bind --guild G --account ID [--project P] [--agent X --model M] [--runtime-mode MODE] [--provider ID] [--roles R1,R2] [--channels C1,C2]
  reseal [--batch N]   re-seal every sealed value under the current content key

Output is JSON on stdout; errors go to stderr with a non-zero exit.
`

// adminCommands are the commands adminCommand knows, as adminUsage lists them.
var adminCommands = []string{
	"account create", "account update", "account list", "key create", "key list", "key revoke",
	"project add", "project update", "project refresh", "project remove", "project list",
	"workspace archive", "workspace unarchive", "workspace delete",
	"webhook deliveries", "webhook redeliver", "slack bind", "discord bind", "reseal",
}

// admin runs an operator command. It opens the hub (store and use cases) for the
// duration of the command only.
func admin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, adminUsage)
		return 0
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage)
		return 2
	}
	// Commands are two words ("account create") except the few of one ("reseal").
	cmd, rest := args[0], args[1:]
	if !slices.Contains(adminCommands, cmd) && len(args) >= 2 {
		cmd, rest = args[0]+" "+args[1], args[2:]
	}
	// Usage questions and unknown commands are answered before anything is opened, so
	// they work without DATABASE_URL.
	if !slices.Contains(adminCommands, cmd) {
		if wantsHelp(args[1:]) { // a group's help: "wshub admin account --help"
			fmt.Fprint(stdout, adminUsage)
			return 0
		}
		fmt.Fprintf(stderr, "wshub admin: unknown command %q\n\n%s", cmd, adminUsage)
		return 2
	}
	if wantsHelp(rest) {
		fmt.Fprint(stdout, adminUsage)
		return 0
	}
	cfg, err := hub.LoadConfig()
	if err != nil {
		fmt.Fprintf(stderr, "wshub admin: %v\n", err)
		return 1
	}
	// Reseal reads every attachment's bytes from the data directory: run with another
	// one (WSHUB_DATA_DIR unset, say) it would find none, and must not make an empty one.
	if cmd == "reseal" {
		if fi, err := os.Stat(cfg.DataDir); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "wshub admin reseal: the data directory %s does not exist; run with the hub's WSHUB_DATA_DIR\n", cfg.DataDir)
			return 1
		}
	}
	// Operator commands run no agent turns, so they do not need (or check) the sandbox.
	h, err := hub.Open(ctx, cfg, nil, hub.Options{Admin: true})
	if err != nil {
		fmt.Fprintf(stderr, "wshub admin: %v\n", err)
		return 1
	}
	defer h.Close()
	if cmd == "reseal" {
		return reseal(ctx, h, rest, stdout, stderr)
	}
	out, err := adminCommand(ctx, h.Service, cmd, rest)
	var usage usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 2
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "wshub admin %s: %v (wshub admin --help lists the flags)\n", cmd, err)
		return 2
	}
	// A command can fail with something to show (a project kept failed, with its
	// reason): the JSON goes to stdout all the same, the error to stderr.
	if out != nil {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if eerr := enc.Encode(out); eerr != nil && err == nil {
			err = eerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "wshub admin %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

func adminCommand(ctx context.Context, svc *core.Service, cmd string, args []string) (any, error) {
	fs := flag.NewFlagSet("wshub admin "+cmd, flag.ContinueOnError)
	switch cmd {
	case "account create":
		name := fs.String("name", "", "account name")
		entitled := fs.Bool("entitled", false, "the account has the cloud entitlement")
		hold := fs.Bool("billing-hold", false, "the account has a billing hold")
		metered := fs.Bool("metered", true, "the account pays by billing period (false: never checked)")
		periodEnd := fs.String("billing-period-end", "", "end of the current billing period (RFC3339)")
		if err := parse(fs, args, "name"); err != nil {
			return nil, err
		}
		a := &core.Account{Name: *name, Entitled: *entitled, BillingHold: *hold, Metered: *metered}
		if *periodEnd != "" {
			t, err := time.Parse(time.RFC3339, *periodEnd)
			if err != nil {
				return nil, fmt.Errorf("--billing-period-end: %w", err)
			}
			a.BillingPeriodEnd = &t
		}
		if err := svc.Admin.CreateAccount(ctx, a); err != nil {
			return nil, err
		}
		return map[string]string{"accountId": a.ID}, nil

	case "account update":
		id := fs.String("account", "", "account id")
		var entitled, hold, metered optBool
		fs.Var(&entitled, "entitled", "the account has the cloud entitlement (true|false)")
		fs.Var(&hold, "billing-hold", "the account has a billing hold (true|false)")
		fs.Var(&metered, "metered", "the account pays by billing period (true|false)")
		periodEnd := fs.String("billing-period-end", "", "end of the current billing period (RFC3339), or none")
		var maxWorkspaces, maxOpen, maxTurns optInt
		fs.Var(&maxWorkspaces, "max-workspaces", "quota: live workspaces of the account (-1: the hub's default, WSHUB_MAX_WORKSPACES)")
		fs.Var(&maxOpen, "max-open-messages", "quota: messages waiting in one workspace (-1: the hub's default, WSHUB_MAX_OPEN_MESSAGES)")
		provider := fs.String("provider", "", "provider of the account's workspaces whose create names none (none: the hub's default)")
		fs.Var(&maxTurns, "max-running-turns", "quota: turns of the account running at once; more wait their turn (-1: the hub's default, WSHUB_MAX_RUNNING_TURNS)")
		if err := parse(fs, args, "account"); err != nil {
			return nil, err
		}
		u := core.AccountUpdate{Entitled: entitled.v, BillingHold: hold.v, Metered: metered.v,
			MaxWorkspaces: maxWorkspaces.v, MaxOpenMessages: maxOpen.v, MaxRunningTurns: maxTurns.v}
		if flagGiven(fs, "provider") {
			p := *provider
			if p == "none" {
				p = ""
			}
			u.ProviderID = &p
		}
		switch *periodEnd {
		case "":
		case "none":
			u.ClearBillingPeriod = true
		default:
			t, err := time.Parse(time.RFC3339, *periodEnd)
			if err != nil {
				return nil, fmt.Errorf("--billing-period-end: %w", err)
			}
			u.BillingPeriodEnd = &t
		}
		a, err := svc.Admin.UpdateAccount(ctx, *id, u)
		if err != nil {
			return nil, err
		}
		return accountJSON(a), nil

	case "key create":
		id := fs.String("account", "", "account id")
		name := fs.String("name", "", "key name")
		if err := parse(fs, args, "account", "name"); err != nil {
			return nil, err
		}
		k, secret, err := svc.Admin.CreateAPIKey(ctx, *id, *name)
		if err != nil {
			return nil, err
		}
		return map[string]string{"keyId": k.ID, "key": secret}, nil

	case "key revoke":
		id := fs.String("key-id", "", "key id")
		if err := parse(fs, args, "key-id"); err != nil {
			return nil, err
		}
		if err := svc.Admin.RevokeAPIKey(ctx, *id); err != nil {
			return nil, err
		}
		return map[string]any{"keyId": *id, "revoked": true}, nil

	case "project add":
		id := fs.String("account", "", "account id")
		repo := fs.String("repository", "", "repository URL or local path")
		name := fs.String("name", "", "display name (default: the repository's name)")
		branch := fs.String("default-branch", "", "default branch (default: detected)")
		push := fs.Bool("push", false, "push workspace branches after each turn")
		network := fs.String("network", core.NetworkFull, networkUsage)
		if err := parse(fs, args, "account", "repository"); err != nil {
			return nil, err
		}
		return addProject(ctx, svc, core.AddProjectInput{AccountID: *id, Repository: localPath(*repo), Name: *name,
			DefaultBranch: *branch, Push: *push, Network: *network})

	case "project update":
		id := fs.String("project", "", "project id")
		name := fs.String("name", "", "display name")
		branch := fs.String("default-branch", "", "default branch")
		var push optBool
		fs.Var(&push, "push", "push workspace branches after each turn (true|false)")
		network := fs.String("network", "", networkUsage)
		if err := parse(fs, args, "project"); err != nil {
			return nil, err
		}
		in := core.UpdateProjectInput{ProjectID: *id, Push: push.v}
		if flagGiven(fs, "network") {
			in.Network = network
		}
		if flagGiven(fs, "name") {
			in.Name = name
		}
		if flagGiven(fs, "default-branch") {
			in.DefaultBranch = branch
		}
		p, err := svc.Admin.UpdateProject(ctx, in)
		if err != nil {
			return nil, err
		}
		return projectAdminJSON(p), nil

	case "project refresh":
		id := fs.String("project", "", "project id")
		if err := parse(fs, args, "project"); err != nil {
			return nil, err
		}
		p, err := svc.Admin.RefreshProject(ctx, *id)
		if err != nil {
			if p != nil {
				return projectAdminJSON(p), fmt.Errorf("the repository could not be fetched: %w", err)
			}
			return nil, err
		}
		if p.State == core.ProjectFailed {
			return projectAdminJSON(p), fmt.Errorf("the repository could not be mirrored: %s", p.FailureReason)
		}
		return projectAdminJSON(p), nil

	case "project remove":
		id := fs.String("project", "", "project id")
		force := fs.Bool("force", false, "archive the live workspaces that use the project first")
		if err := parse(fs, args, "project"); err != nil {
			return nil, err
		}
		r, err := svc.Admin.RemoveProject(ctx, *id, *force)
		if err != nil {
			return nil, err
		}
		out := projectAdminJSON(r.Project)
		out["archivedWorkspaces"] = append([]string{}, r.Archived...)
		if r.MirrorError != "" {
			out["mirrorError"] = r.MirrorError
		}
		return out, nil

	case "account list":
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		list, err := svc.Admin.ListAccounts(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(list))
		for i, a := range list {
			out[i] = accountJSON(a)
		}
		return out, nil

	case "key list":
		id := fs.String("account", "", "account id")
		if err := parse(fs, args, "account"); err != nil {
			return nil, err
		}
		list, err := svc.Admin.ListAPIKeys(ctx, *id)
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

	case "project list":
		id := fs.String("account", "", "account id")
		if err := parse(fs, args, "account"); err != nil {
			return nil, err
		}
		list, err := svc.Admin.ListProjects(ctx, *id)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(list))
		for i, p := range list {
			out[i] = projectAdminJSON(p)
		}
		return out, nil

	case "workspace archive", "workspace unarchive", "workspace delete":
		id := fs.String("workspace", "", "workspace id")
		if err := parse(fs, args, "workspace"); err != nil {
			return nil, err
		}
		move := map[string]func(context.Context, string) (*core.Workspace, error){
			"workspace archive": svc.Admin.ArchiveWorkspace, "workspace unarchive": svc.Admin.UnarchiveWorkspace,
			"workspace delete": svc.Admin.DeleteWorkspace,
		}[cmd]
		ws, err := move(ctx, *id)
		if err != nil {
			return nil, err
		}
		return map[string]string{"workspaceId": ws.ID, "state": string(ws.State)}, nil

	case "webhook deliveries":
		id := fs.String("account", "", "account id")
		status := fs.String("status", "", "only deliveries in this status: pending, delivered or failed")
		limit := fs.Int("limit", 100, "at most this many, newest first")
		if err := parse(fs, args, "account"); err != nil {
			return nil, err
		}
		if *limit < 1 || *limit > 10000 {
			return nil, fmt.Errorf("--limit must be between 1 and 10000")
		}
		list, err := svc.Admin.ListDeliveries(ctx, *id, *status, *limit)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(list))
		for i, d := range list {
			out[i] = deliveryJSON(d)
		}
		return out, nil

	case "slack bind":
		b := bindFlags(fs, core.PlatformSlack, "team", "Slack team (workspace) id, T...")
		if err := parse(fs, args, "team", "account"); err != nil {
			return nil, err
		}
		return bind(ctx, svc, b())

	case "discord bind":
		b := bindFlags(fs, core.PlatformDiscord, "guild", "Discord server (guild) id")
		roles := fs.String("roles", "", "comma-separated role ids: only members holding one may start or talk")
		channels := fs.String("channels", "", "comma-separated channel ids: only there and in their threads")
		if err := parse(fs, args, "guild", "account"); err != nil {
			return nil, err
		}
		binding := b()
		binding.Roles, binding.Channels = splitIDs(*roles), splitIDs(*channels)
		return bind(ctx, svc, binding)

	case "webhook redeliver":
		id := fs.String("delivery", "", "delivery id")
		if err := parse(fs, args, "delivery"); err != nil {
			return nil, err
		}
		d, err := svc.Admin.Redeliver(ctx, *id)
		if err != nil {
			return nil, err
		}
		return deliveryJSON(d), nil
	}
	return nil, fmt.Errorf("unknown command\n\n%s", adminUsage)
}

// networkUsage is the --network flag's help.
const networkUsage = "what agent turns may reach: full (the internet, not the hub host), none, or host (the hub host's network; unsafe)"

// addProject records the project and mirrors it now, so the operator sees the outcome.
func addProject(ctx context.Context, svc *core.Service, in core.AddProjectInput) (any, error) {
	p, err := svc.Admin.AddProject(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := svc.Admin.PrepareProject(ctx, p); err != nil {
		return nil, err
	}
	out := map[string]any{"projectId": p.ID, "state": p.State}
	if p.FailureReason != "" {
		out["failureReason"] = p.FailureReason
	}
	if p.State == core.ProjectFailed {
		// Kept (project list shows it, with the reason, and so does the API's project
		// list); the exit status says it failed, and the error how to go on.
		return out, fmt.Errorf("the repository could not be mirrored: %s. The project is kept, failed: retry with "+
			"wshub admin project refresh --project %s once the repository is reachable, or remove it with "+
			"wshub admin project remove --project %s", p.FailureReason, p.ID, p.ID)
	}
	return out, nil
}

// localPath makes an existing local repository path absolute, so the hub finds it
// whatever its working directory; URLs pass unchanged.
func localPath(repo string) string {
	if st, err := os.Stat(repo); err == nil && st.IsDir() {
		if abs, err := filepath.Abs(repo); err == nil {
			return abs
		}
	}
	return repo
}

func accountJSON(a *core.Account) map[string]any {
	out := map[string]any{"accountId": a.ID, "name": a.Name, "entitled": a.Entitled, "billingHold": a.BillingHold, "metered": a.Metered}
	if a.BillingPeriodEnd != nil {
		out["billingPeriodEnd"] = a.BillingPeriodEnd.Format(time.RFC3339)
	}
	if a.MaxWorkspaces != nil {
		out["maxWorkspaces"] = *a.MaxWorkspaces
	}
	if a.MaxOpenMessages != nil {
		out["maxOpenMessages"] = *a.MaxOpenMessages
	}
	if a.MaxRunningTurns != nil {
		out["maxRunningTurns"] = *a.MaxRunningTurns
	}
	if a.ProviderID != "" {
		out["providerId"] = a.ProviderID
	}
	return out
}

func projectAdminJSON(p *core.Project) map[string]any {
	out := map[string]any{
		"projectId": p.ID, "repository": core.DisplayRepository(p.Repository), "displayName": p.DisplayName,
		"defaultBranch": p.DefaultBranch, "state": p.State, "push": p.Push, "network": p.Network,
	}
	if p.FailureReason != "" {
		out["failureReason"] = p.FailureReason
	}
	if p.RemovedAt != nil {
		out["removedAt"] = p.RemovedAt.UTC().Format(time.RFC3339)
	}
	return out
}

// deliveryJSON is a delivery for the operator: attempts, the last status code and
// error, and when the next attempt is due (pending only).
func deliveryJSON(d *core.Delivery) map[string]any {
	out := map[string]any{
		"deliveryId": d.ID, "webhookId": d.WebhookID, "url": d.URL, "eventId": d.EventID, "status": d.Status,
		"attempts": d.Attempts, "maxAttempts": d.MaxAttempts, "lastError": d.LastError,
		"createdAt": d.CreatedAt.Format(time.RFC3339Nano),
	}
	if d.LastStatusCode != 0 {
		out["lastStatusCode"] = d.LastStatusCode
	}
	if d.LastAttemptAt != nil {
		out["lastAttemptAt"] = d.LastAttemptAt.Format(time.RFC3339Nano)
	}
	if d.Status == core.DeliveryPending {
		out["nextAttemptAt"] = d.NextAttemptAt.Format(time.RFC3339Nano)
	}
	if d.DeliveredAt != nil {
		out["deliveredAt"] = d.DeliveredAt.Format(time.RFC3339Nano)
	}
	return out
}

// parse parses flags, refuses stray arguments and checks the required ones.
func parse(fs *flag.FlagSet, args []string, required ...string) error {
	fs.SetOutput(io.Discard) // the error is said once, by admin
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			return usageError{fmt.Errorf("--%s is required", name)}
		}
	}
	return nil
}

// usageError is a command line the command cannot read: exit 2, as for every command.
type usageError struct{ error }

// bindFlags declares the flags every chat binding takes (the team under the platform's
// own name) and returns the binding they give once parsed.
func bindFlags(fs *flag.FlagSet, platform, teamFlag, teamUsage string) func() *core.ChatBinding {
	team := fs.String(teamFlag, "", teamUsage)
	id := fs.String("account", "", "account id the "+teamFlag+" acts for")
	project := fs.String("project", "", "default project for workspaces started from "+platform)
	agent := fs.String("agent", "", "default agent (agent_1..agent_4), with --model")
	model := fs.String("model", "", "default model, with --agent")
	mode := fs.String("runtime-mode", "", "runtimeMode of the workspaces started from "+platform+" (approval-required: the agent asks the thread)")
	provider := fs.String("provider", "", "provider of the workspaces started from "+platform+" (default: the account's, else the hub's)")
	return func() *core.ChatBinding {
		return &core.ChatBinding{Platform: platform, TeamID: *team, AccountID: *id, ProjectID: *project, Agent: *agent, Model: *model,
			RuntimeMode: *mode, ProviderID: *provider}
	}
}

// bind stores a chat binding and echoes it; a Slack team shows as "team", a Discord
// guild as "guild", with the roles and channels it is limited to.
func bind(ctx context.Context, svc *core.Service, b *core.ChatBinding) (any, error) {
	if err := svc.Admin.BindChat(ctx, b); err != nil {
		return nil, err
	}
	out := map[string]any{"platform": b.Platform, "accountId": b.AccountID, "projectId": b.ProjectID, "agent": b.Agent, "model": b.Model,
		"runtimeMode": b.RuntimeMode, "providerId": b.ProviderID}
	if b.Platform == core.PlatformDiscord {
		out["guild"], out["roles"], out["channels"] = b.TeamID, b.Roles, b.Channels
	} else {
		out["team"] = b.TeamID
	}
	return out, nil
}

// splitIDs reads a comma-separated list of ids (empty: none).
func splitIDs(s string) []string {
	out := []string{}
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// flagGiven reports whether the flag was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// optBool is a boolean flag that remembers whether it was given (--flag or --flag=BOOL).
type optBool struct{ v *bool }

func (o *optBool) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatBool(*o.v)
}

func (o *optBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	o.v = &b
	return nil
}

func (o *optBool) IsBoolFlag() bool { return true }

// optInt is an integer flag that says whether it was given.
type optInt struct{ v *int }

func (o *optInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	o.v = &n
	return nil
}
