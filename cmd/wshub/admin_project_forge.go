package main

// wshub admin project add|update: the forge, pull request and credential flags.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/wshub/wshub/core"
)

// forgeFlags are the flags add and update share. Secrets are read from files, never
// from the command line (ps and shell history show those).
type forgeFlags struct {
	fs                               *flag.FlagSet
	forge, pullRequests              *string
	tokenFile, tokenUser, sshKeyFile *string
	appID, installationID            *int64
	appKeyFile                       *string
	noCredential                     *bool
}

// credentialFlagNames are the flags that give a credential, one kind at a time.
var credentialFlagNames = []string{"token-file", "ssh-key-file", "github-app-id"}

func addForgeFlags(fs *flag.FlagSet, update bool) *forgeFlags {
	f := &forgeFlags{
		fs:             fs,
		forge:          fs.String("forge", "", "where the repository is reviewed: github, gitlab or gitea (Forgejo, Codeberg); detected for github.com, gitlab.com, codeberg.org"),
		pullRequests:   fs.String("pull-requests", "", "open a pull request after a workspace's first push: off (the default), draft or ready"),
		tokenFile:      fs.String("token-file", "", "file holding the project's HTTPS token (sent as the password)"),
		tokenUser:      fs.String("token-user", "", "user name sent with the token (default x-access-token; GitLab: oauth2)"),
		sshKeyFile:     fs.String("ssh-key-file", "", "file holding the project's SSH deploy key (private key)"),
		appID:          fs.Int64("github-app-id", 0, "the GitHub App's id (with --github-installation-id and --github-app-key-file)"),
		installationID: fs.Int64("github-installation-id", 0, "the App's installation id for the repository's owner"),
		appKeyFile:     fs.String("github-app-key-file", "", "file holding the App's private key (PEM)"),
	}
	if update {
		f.noCredential = fs.Bool("no-credential", false, "remove the project's credential: the hub-wide one is used again")
	}
	return f
}

// input reads the flags given into core's input, reading the secret files.
func (f *forgeFlags) input() (core.ProjectForgeInput, error) {
	var in core.ProjectForgeInput
	if flagGiven(f.fs, "forge") {
		in.Forge = f.forge
	}
	if flagGiven(f.fs, "pull-requests") {
		in.PullRequests = f.pullRequests
	}
	if f.noCredential != nil && *f.noCredential {
		in.ClearCredential = true
	}
	var given []string
	for _, name := range credentialFlagNames {
		if flagGiven(f.fs, name) {
			given = append(given, name)
		}
	}
	switch {
	case len(given) == 0:
		return in, nil
	case len(given) > 1:
		return in, fmt.Errorf("give one credential: --%s", strings.Join(given, " or --"))
	}
	var c core.ProjectCredential
	var err error
	switch given[0] {
	case "token-file":
		c.Kind, c.User = core.CredentialToken, *f.tokenUser
		c.Token, err = readSecretFile("--token-file", *f.tokenFile)
	case "ssh-key-file":
		c.Kind = core.CredentialSSHKey
		c.SSHKey, err = readSecretFile("--ssh-key-file", *f.sshKeyFile)
	case "github-app-id":
		if *f.installationID == 0 || *f.appKeyFile == "" {
			return in, errors.New("a GitHub App needs --github-app-id, --github-installation-id and --github-app-key-file")
		}
		c.Kind, c.AppID, c.InstallationID = core.CredentialGitHubApp, *f.appID, *f.installationID
		c.AppKey, err = readSecretFile("--github-app-key-file", *f.appKeyFile)
	}
	if err != nil {
		return in, err
	}
	in.Credential = &c
	return in, nil
}

// maxSecretFile bounds a secret file read (keys are a few KiB; core refuses more than
// 16 KiB with its own words).
const maxSecretFile = 64 << 10

// readSecretFile reads a secret from a regular file, refusing a large one before it
// is read; a token file's surrounding white space is trimmed by core.
func readSecretFile(flagName, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%s needs a file", flagName)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %s is not a regular file", flagName, path)
	}
	return readSecret(flagName, f)
}

// readSecret reads a secret from r, refusing more than maxSecretFile.
func readSecret(flagName string, r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", flagName, err)
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("%s: the file is larger than %d KiB", flagName, maxSecretFile>>10)
	}
	return string(b), nil
}

// forgeEventsFlags are update's flags of the project's forge events: the handle, the
// trigger label and the webhook's secret, from a file.
type forgeEventsFlags struct {
	fs                                *flag.FlagSet
	handle, label, secretFile, events *string
	fixChecks                         *int
}

func addForgeEventsFlags(fs *flag.FlagSet) *forgeEventsFlags {
	return &forgeEventsFlags{fs: fs,
		handle:     fs.String("forge-handle", "", "the handle that asks for work in an issue comment (default "+core.DefaultForgeHandle+")"),
		label:      fs.String("trigger-label", "", "an issue given this label starts a workspace with the issue as the prompt (empty: none)"),
		secretFile: fs.String("forge-webhook-secret-file", "", "file holding the secret the forge's webhook signs deliveries with: events are taken from then on"),
		fixChecks:  fs.Int("fix-checks", 0, "at most this many failed checks of a workspace's pull request become its follow-ups (0: none, the default)"),
		events: fs.String("forge-events", "", "off: take no more forge events for the project (its secret and handle are dropped); on: the default once a secret is set, "+
			"and without one on GitHub for an account with a GitHub App (wshub admin account github-app)"),
	}
}

// input reads the flags given into core's input (nil: none was given).
func (f *forgeEventsFlags) input() (*core.ForgeEventsInput, error) {
	var in core.ForgeEventsInput
	if flagGiven(f.fs, "forge-handle") {
		in.Handle = f.handle
	}
	if flagGiven(f.fs, "trigger-label") {
		in.TriggerLabel = f.label
	}
	if flagGiven(f.fs, "fix-checks") {
		in.FixChecks = f.fixChecks
	}
	if flagGiven(f.fs, "forge-webhook-secret-file") {
		secret, err := readSecretFile("--forge-webhook-secret-file", *f.secretFile)
		if err != nil {
			return nil, err
		}
		in.Secret = &secret
	}
	switch {
	case !flagGiven(f.fs, "forge-events"):
	case *f.events == "on":
		in.On = true
	case *f.events == "off":
		in.Off = true
	default:
		return nil, fmt.Errorf("--forge-events is on or off, not %q", *f.events)
	}
	if in.Handle == nil && in.Secret == nil && in.TriggerLabel == nil && in.FixChecks == nil && !in.Off && !in.On {
		return nil, nil
	}
	return &in, nil
}
