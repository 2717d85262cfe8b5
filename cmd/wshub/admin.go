package main

// The operator commands: `wshub admin <command>`, run against the hub's database and
// data directory for the command's duration, JSON on stdout. Each command is a row of
// adminCommands; the usage, each command's --help and the reading of its command line
// come from the table, and a test holds each row's synopsis to the flags it defines.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// adminCommand is one operator command.
type adminCommand struct {
	name string // "account create"; a group's commands share the first word
	// synopsis is the command's flags as the usage shows them: required ones bare,
	// optional ones in brackets (a test holds it to the flags the command defines).
	synopsis string
	about    string   // what the command does, for its --help
	required []string // flags that must be given a value
	oneOf    []string // flags of which exactly one must be given (shown bare, joined by |)
	// flags declares the command's flags and returns what runs it once they are read.
	flags func(fs *flag.FlagSet) adminRun
	// check, when set, vets the configuration before the hub is opened.
	check func(hub.Config) error
}

// adminRun runs a command whose flags were read. What it returns, a value of the
// command's output type, printJSON prints, also alongside an error when there is
// something to show (a project kept failed). The output types list their fields in the
// order of their JSON names: the order the output had when it was made of maps.
type adminRun func(ctx context.Context, h adminHub) (any, error)

// adminHub is what a command runs against: the hub opened for it.
type adminHub struct {
	svc   *core.Service
	keyID string // the current content key's id
	// progress is where a long command reports as it goes (stderr): stdout is its
	// JSON alone.
	progress io.Writer
	stdin    io.Reader // the command's standard input (--value-file -)
	cfg      hub.Config
}

// adminCommands are the operator commands, in the order the usage lists them.
var adminCommands = []adminCommand{
	{name: "account create", synopsis: "--name N [--entitled] [--billing-hold] [--metered=BOOL] [--billing-period-end RFC3339]",
		about: "Creates an account and prints its id.", required: []string{"name"}, flags: accountCreate},
	{name: "account update", synopsis: "--account ID [--entitled=BOOL] [--billing-hold=BOOL] [--metered=BOOL] [--billing-period-end RFC3339|none] " +
		"[--max-workspaces N] [--max-open-messages N] [--max-running-turns N] [--max-keys N] [--provider ID|none]",
		about: "Changes the settings given and prints the account. A quota of -1 is the hub's default; " +
			"--provider is the provider of the account's workspaces whose create names none.",
		required: []string{"account"}, flags: accountUpdate},
	{name: "account list", about: "Lists every account with its settings.", flags: accountList},
	{name: "account github-app", synopsis: "--account ID [--app-id N] [--webhook-secret-file F] [--private-key-file F] [--installation N[,N...]]",
		about: "Sets the account's GitHub App: its deliveries are verified by the App's webhook secret and reach the account's " +
			"projects by their installation, then repository; a GitHub project of the account takes them with --forge-events on, " +
			"without a secret of its own. The first setting needs --app-id and --webhook-secret-file; --installation replaces the " +
			"account's installations (an installation is one account's). The secret is sealed and never shown.",
		required: []string{"account"}, flags: accountGitHubApp},
	{name: "key create", synopsis: "--account ID --name N [--scopes a,b] [--projects p1,p2] [--expires RFC3339]",
		about: `Creates an API key for the account and prints {"keyId","key"}: the key is shown once, here. ` +
			"A key made without --scopes, --projects or --expires has full access; the scopes are " + core.JoinKeyScopes(core.KeyScopes) + ".",
		required: []string{"account", "name"}, flags: keyCreate},
	{name: "key list", synopsis: "--account ID",
		about:    "Lists the account's keys: ids, names, created, scopes, projects, expiry, last used, revoked; never a key.",
		required: []string{"account"}, flags: keyList},
	{name: "key revoke", synopsis: "--key-id ID", about: "Revokes an API key.", required: []string{"key-id"}, flags: keyRevoke},
	{name: "member add", synopsis: "--account ID --email E|--slack T:U|--discord U|--oidc ISSUER:SUB --role owner|member [--name N]",
		about: "Gives a person a role in the account (owners manage its keys, webhooks and members in the app); " +
			"the person is named by one identity they sign in with.",
		required: []string{"account", "role"}, oneOf: identityFlagNames, flags: memberAdd},
	{name: "member remove", synopsis: "--account ID --email E|--slack T:U|--discord U|--oidc ISSUER:SUB",
		about: "Takes a person out of the account.", required: []string{"account"}, oneOf: identityFlagNames, flags: memberRemove},
	{name: "member list", synopsis: "--account ID", about: "Lists the account's members, owners first, with their identities.",
		required: []string{"account"}, flags: memberList},
	{name: "member link", synopsis: "--account ID --email E|--slack T:U|--discord U|--oidc ISSUER:SUB --forge github|gitlab|gitea --login L [--forge-url URL]",
		about: "Links a forge login to a member of the account: what the login asks on the forge is the member's, and the " +
			"turn's commit names them as co-author. --forge-url is the forge's address (default https://github.com, " +
			"https://gitlab.com; required for gitea): the identity is the person's profile page there.",
		required: []string{"account", "forge", "login"}, oneOf: identityFlagNames, flags: memberLink},
	{name: "member signin-link", synopsis: "--account ID --email E|--slack T:U|--discord U|--oidc ISSUER:SUB",
		about: "Prints a one-time link that signs a member of the account in to the app: it works once, within 15 minutes, " +
			"from any browser, so keep it to yourself. The audit log records that it was made. For the first owner of a hub " +
			"without a sign-in provider yet, or an owner locked out; the address is WSHUB_PUBLIC_URL's (else WSHUB_ADDR's).",
		required: []string{"account"}, oneOf: identityFlagNames, flags: memberSignInLink},
	{name: "project add", synopsis: "--account ID --repository URL|PATH [--name N] [--default-branch B] [--push] [--network full|none|host] " +
		"[--forge github|gitlab|gitea] [--pull-requests off|draft|ready] " +
		"[--token-file F [--token-user U] | --ssh-key-file F | --github-app-id N --github-installation-id N --github-app-key-file F]",
		about: "Adds a repository to the account and mirrors it now. A repository that cannot be mirrored " +
			"leaves the project kept, failed, with the reason, and exits 1. A credential given is the project's own, " +
			"sealed and never shown; without one the hub-wide one is used.",
		required: []string{"account", "repository"}, flags: projectAdd},
	{name: "project update", synopsis: "--project ID [--name N] [--default-branch B] [--push=BOOL] [--network full|none|host] " +
		"[--forge K] [--pull-requests off|draft|ready] [--token-file F [--token-user U] | --ssh-key-file F | " +
		"--github-app-id N --github-installation-id N --github-app-key-file F | --no-credential] " +
		"[--environment-file F | --no-environment] [--forge-webhook-secret-file F] [--forge-handle H] [--trigger-label L] [--fix-checks N] [--forge-events on|off]",
		about: "Changes only the settings given: network, push, pull requests and the credential apply from each " +
			"workspace's next turn, the default branch and the environment (docs/environments.md) to workspaces created after. " +
			"A forge webhook secret (read from a file) turns the project's forge events on (docs/operations.md, \"Forge events\").",
		required: []string{"project"}, flags: projectUpdate},
	{name: "project refresh", synopsis: "--project ID",
		about:    "Fetches a ready project's mirror now, or tries a failed project again.",
		required: []string{"project"}, flags: projectRefresh},
	{name: "project remove", synopsis: "--project ID [--force]",
		about:    "Removes the project: refused while live workspaces use it; --force archives them first.",
		required: []string{"project"}, flags: projectRemove},
	{name: "project list", synopsis: "--account ID", about: "Lists the account's projects, failed ones with their reason.",
		required: []string{"account"}, flags: projectList},
	{name: "project secret set", synopsis: "--project ID --name NAME --value-file F [--agent]",
		about: "Creates or replaces a project's secret: a variable its setup and update scripts get, and its agent's turns " +
			"too with --agent. A setup from a base other than the project's default branch gets only the --agent ones. " +
			"The value (at most 32 KiB of text, at least 4 bytes) is read from a file (- for standard input), sealed, " +
			"never shown, and masked as **** wherever a run prints it.",
		required: []string{"project", "name", "value-file"}, flags: projectSecretSet},
	{name: "project secret list", synopsis: "--project ID", about: "Lists the project's secrets: names, --agent, times; never a value.",
		required: []string{"project"}, flags: projectSecretList},
	{name: "project secret remove", synopsis: "--project ID --name NAME",
		about:    "Removes a project's secret: setups and turns started after no longer get it.",
		required: []string{"project", "name"}, flags: projectSecretRemove},
	{name: "project cache list", synopsis: "--project ID",
		about: "Lists the project's saved environment caches, the most recently used first: the base they were saved " +
			"for (scope), the start of their key, their size in the blob store, their files, when last used.",
		required: []string{"project"}, flags: projectCacheList},
	{name: "project cache drop", synopsis: "--project ID --key K|--all",
		about:    "Drops the project's caches whose key starts with K, or all of them, and deletes their archives; the next setup of each key fills it again.",
		required: []string{"project"}, oneOf: []string{"key", "all"}, flags: projectCacheDrop},
	{name: "workspace archive", synopsis: "--workspace ID", about: "Interrupts a running turn and archives the workspace.",
		required: []string{"workspace"}, flags: workspaceArchive},
	{name: "workspace unarchive", synopsis: "--workspace ID", about: "Brings an archived workspace back.",
		required: []string{"workspace"}, flags: workspaceUnarchive},
	{name: "workspace delete", synopsis: "--workspace ID",
		about:    "Interrupts a running turn and deletes the workspace: its checkout and its attachments' stored bytes.",
		required: []string{"workspace"}, flags: workspaceDelete},
	{name: "webhook deliveries", synopsis: "--account ID [--status pending|delivered|failed] [--limit N]",
		about: "Lists the account's webhook deliveries, newest first: attempts, last status code and error, next attempt, " +
			"and the newest 20 attempts' records (attemptLog: time, status code, error, duration, the start of the answer).",
		required: []string{"account"}, flags: webhookDeliveries},
	{name: "webhook redeliver", synopsis: "--delivery ID", about: "Sends a delivery again: one more attempt, due now. Prints the delivery as the list does.",
		required: []string{"delivery"}, flags: webhookRedeliver},
	{name: "slack bind", synopsis: "--team T --account ID [--project P] [--agent X --model M] [--runtime-mode MODE] [--provider ID]",
		about:    "Binds a Slack team to an account, with the defaults of the workspaces started from it.",
		required: []string{"team", "account"}, flags: slackBind},
	{name: "discord bind", synopsis: "--guild G --account ID [--project P] [--agent X --model M] [--runtime-mode MODE] [--provider ID] [--roles R1,R2] [--channels C1,C2]",
		about: "Binds a Discord server to an account, with the defaults of the workspaces started from it; " +
			"binding again without --roles or --channels lifts that limit.",
		required: []string{"guild", "account"}, flags: discordBind},
	{name: "reseal", synopsis: "[--batch N]",
		about: "Re-seals every sealed value under the current content key, while hubs run; progress goes to stderr. " +
			"Exits 1 when a value did not open, after moving every other one.",
		flags: reseal, check: resealDataDir},
}

// findAdminCommand finds the command args start with: three words ("project secret
// set"), two ("account create") or one ("reseal"). ok is false when there is none.
func findAdminCommand(args []string) (cmd adminCommand, rest []string, ok bool) {
	for _, c := range adminCommands {
		for n := 1; n <= min(3, len(args)); n++ {
			if c.name == strings.Join(args[:n], " ") {
				return c, args[n:], true
			}
		}
	}
	return adminCommand{}, nil, false
}

// admin runs an operator command; args start after "wshub admin". The command line
// is read, and usage questions answered, before anything is opened, so that they need
// no DATABASE_URL.
func admin(ctx context.Context, args []string, env environ, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, adminUsage())
		return 2
	}
	if len(args) == 1 && wantsHelp(args) {
		fmt.Fprint(stdout, adminUsage())
		return 0
	}
	cmd, rest, ok := findAdminCommand(args)
	if !ok {
		// A group alone, or with --help ("wshub admin project --help", "wshub admin
		// project secret"): its commands.
		for n := min(2, len(args)); n >= 1; n-- {
			if group := adminGroupUsage(strings.Join(args[:n], " ")); group != "" && (len(args) == n || wantsHelp(args[n:n+1])) {
				if len(args) == n {
					fmt.Fprint(stderr, group)
					return 2
				}
				fmt.Fprint(stdout, group)
				return 0
			}
		}
		name := args[0]
		if len(args) >= 2 {
			name += " " + args[1]
		}
		fmt.Fprintf(stderr, "wshub admin: unknown command %q\n\n%s", name, adminUsage())
		return 2
	}
	fs := flag.NewFlagSet("wshub admin "+cmd.name, flag.ContinueOnError)
	run := cmd.flags(fs)
	err := parse(fs, rest, cmd.required...)
	if err == nil {
		err = exactlyOne(fs, cmd.oneOf)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, cmd.help(fs))
			return 0
		}
		// Exit 2, as for every command; a value the flag refuses (a time that is not one,
		// a --limit out of range) is a command line it cannot read too.
		fmt.Fprintf(stderr, "wshub admin %s: %v (wshub admin %s --help lists its flags)\n", cmd.name, err, cmd.name)
		return 2
	}
	cfg, err := hub.LoadConfigFrom(env.list())
	if err != nil {
		fmt.Fprintf(stderr, "wshub admin: %v\n", err)
		return 1
	}
	if cmd.check != nil {
		if err := cmd.check(cfg); err != nil {
			fmt.Fprintf(stderr, "wshub admin %s: %v\n", cmd.name, err)
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
	out, err := run(ctx, adminHub{svc: h.Service, keyID: h.ContentKeyID, progress: stderr, stdin: env.input(), cfg: h.Config})
	// A command can fail with something to show (a project kept failed, with its
	// reason): the JSON goes to stdout all the same, the error to stderr.
	if out != nil {
		if perr := printJSON(stdout, out); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "wshub admin %s: %v\n", cmd.name, err)
		return adminExit(err)
	}
	return 0
}

// adminExit is a failed command's exit: 2 for a value its flags cannot take (what the
// API would answer 400: an unknown mode, an agent without its model), as for every
// usage error; 1 for a refusal (no such account, a state that forbids it).
func adminExit(err error) int {
	var ce *core.Error
	if errors.As(err, &ce) {
		if status, ok := core.HTTPStatus(ce.Code); ok && status == 400 {
			return 2
		}
	}
	return 1
}

// printJSON is how every operator command shows its result: indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
