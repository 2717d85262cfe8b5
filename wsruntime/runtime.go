// Package wsruntime is `wshub runtime`: the turn loop of one workspace, run on the
// workspace's own machine (a process of the `process` provider, a Pod of the
// `kubernetes` one). It reaches the hub only over the runtime API (api/runtimewire),
// with the token the hub gave the machine; it never sees the database, the content
// keys or the project's git credentials. Agents run exactly as in the hub: the same
// adapters (adapters/agents) and the same bubblewrap sandbox.
package wsruntime

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/adapters/gitrepo"
	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/core"
)

// Config is the runtime's environment.
type Config struct {
	// HubURL is the hub's base URL as the machine reaches it (WSHUB_RUNTIME_URL).
	HubURL string
	// Token is the machine's runtime token (runtimeToken in cmd/wshub reads it).
	Token string
	// Dir holds the machine's disk: the checkout, the agent's home and the runtime's
	// own state (WSHUB_RUNTIME_DIR).
	Dir string
	// DiskBytes is the workspace's disk quota, checkout and home together (0: none).
	DiskBytes int64
	// Author is who the turns' commits are by (WSHUB_COMMIT_AUTHOR, as the hub's).
	Author gitrepo.Author
	// Agents configure the agent runner as in the hub (commands, sandbox, env).
	Agents agents.Options
	// HubLostAfter is how long the runtime goes on reaching no hub (refused, cut, timed
	// out, 5xx) before it stops its turn, keeps the turn's work on its disk and ends
	// with ErrHubLost (WSHUB_RUNTIME_HUB_LOST_AFTER; 0: DefaultHubLostAfter). Longer
	// rides out longer hub outages; shorter frees a machine whose hub died sooner.
	HubLostAfter time.Duration
	Log          *slog.Logger
}

// ExitStopped is the exit code of a runtime the hub told to stop (token revoked,
// replaced, workspace stopping): whoever supervises it must not start it again.
const ExitStopped = 3

// ErrStopped wraps the hub's answer that this runtime must stop.
var ErrStopped = errors.New("the hub stopped this runtime")

// Runtime is one runtime process.
type Runtime struct {
	cfg    Config
	hub    *client
	runner core.AgentRunner
	// closeRunner ends what the runner prepares for the workspace's next turn, when
	// Run returns.
	closeRunner func()
	log         *slog.Logger
	hello       runtimewire.Hello
	// hubHead is the branch head the hub has: commits after it are uploaded.
	hubHead string
}

// New checks the configuration and builds the agent runner (bubblewrap checked).
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.HubURL == "" || cfg.Token == "" || cfg.Dir == "" {
		return nil, errors.New("WSHUB_RUNTIME_URL, the runtime token (WSHUB_RUNTIME_TOKEN_FD, _FILE or WSHUB_RUNTIME_TOKEN) and WSHUB_RUNTIME_DIR must be set")
	}
	if cfg.HubLostAfter < 0 {
		return nil, fmt.Errorf("%s (%s) must be more than 0", HubLostAfterVar, cfg.HubLostAfter)
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cfg.Agents.StateDir = filepath.Join(dir, "run")
	// The agent sees its checkout and home only, bound one by one.
	cfg.Agents.Sandbox.Hidden = append(cfg.Agents.Sandbox.Hidden, dir)
	runner, err := agents.New(ctx, cfg.Agents)
	if err != nil {
		return nil, err
	}
	session := make([]byte, 16)
	_, _ = rand.Read(session)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 15 * time.Second}).DialContext
	// A long poll answers within MaxWaitSeconds; a hub silent for longer is gone.
	transport.ResponseHeaderTimeout = time.Duration(runtimewire.MaxWaitSeconds+30) * time.Second
	hub := &client{url: cfg.HubURL, token: cfg.Token, session: hex.EncodeToString(session),
		http: &http.Client{Transport: transport}, backoff: core.Backoff{First: 200 * time.Millisecond, Max: 5 * time.Second},
		reach: &reach{after: cmp.Or(cfg.HubLostAfter, DefaultHubLostAfter), now: time.Now}}
	return &Runtime{cfg: cfg, hub: hub, runner: runner, closeRunner: runner.Close, log: log.With("runtime", hub.session)}, nil
}

// Run runs the workspace until ctx ends, the hub stops this runtime (ErrStopped), or
// no hub has been reached for HubLostAfter (ErrHubLost).
func (r *Runtime) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if r.closeRunner != nil {
		defer r.closeRunner()
	}
	// Whichever call finds the hub lost ends everything, the running turn's agent too.
	r.hub.onLost = func(err error) { cancel(err) }
	if _, err := r.hub.call(ctx, request{method: "POST", path: "/hello"}, &r.hello); err != nil {
		return r.ended(context.Cause(ctx), err)
	}
	r.log = r.log.With("workspace", r.hello.WorkspaceID)
	r.log.Info("runtime connected", "state", r.hello.State)
	go r.heartbeat(ctx, cancel)
	if err := r.checkout(ctx); err != nil {
		return r.ended(context.Cause(ctx), err)
	}
	if err := r.prepare(ctx); err != nil {
		return r.ended(context.Cause(ctx), err)
	}
	if _, err := r.hub.call(ctx, request{method: "POST", path: "/ready"}, nil); err != nil {
		return r.ended(context.Cause(ctx), err)
	}
	for {
		var turn runtimewire.Turn
		got, err := r.hub.call(ctx, request{method: "POST", path: "/next", json: runtimewire.Next{WaitSeconds: runtimewire.MaxWaitSeconds}}, &turn)
		if err != nil {
			return r.ended(context.Cause(ctx), err)
		}
		if !got {
			continue
		}
		if err := r.runTurn(ctx, &turn); err != nil {
			return r.ended(context.Cause(ctx), err)
		}
	}
}

// ended turns the reason the loop stopped into Run's error, and logs why when the
// hub stopped the runtime or could not be reached.
func (r *Runtime) ended(errs ...error) error {
	for _, err := range errs {
		if stops(err) {
			r.log.Info("the hub stopped this runtime", "reason", err)
			return fmt.Errorf("%w: %w", ErrStopped, err)
		}
	}
	for _, err := range errs {
		var lost *hubLostError
		if errors.As(err, &lost) {
			r.log.Error(lost.why(), "last_error", lost.last.Error())
			return lost
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// heartbeat tells the hub the runtime lives, even during a long turn, and stops the
// runtime (cancelling its turn: it ends interrupted) when the hub says so.
func (r *Runtime) heartbeat(ctx context.Context, stop context.CancelCauseFunc) {
	t := time.NewTicker(core.RuntimeHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var hb runtimewire.Heartbeat
		if _, err := r.hub.call(ctx, request{method: "POST", path: "/heartbeat"}, &hb); stops(err) {
			stop(err)
			return
		}
	}
}

func (r *Runtime) checkoutDir() string { return filepath.Join(r.cfg.Dir, "checkout") }
func (r *Runtime) hubHeadFile() string { return filepath.Join(r.cfg.Dir, "hub-head") }

func (r *Runtime) repo() *gitrepo.Checkout {
	return &gitrepo.Checkout{Dir: r.checkoutDir(), MaxBytes: r.cfg.DiskBytes, Counted: []string{filepath.Join(r.cfg.Dir, "home")},
		Author: r.cfg.Author}
}

// checkout makes the workspace's checkout from the hub's bundle of its branch, unless
// the machine's disk kept it (a resume).
func (r *Runtime) checkout(ctx context.Context) error {
	if head, err := os.ReadFile(r.hubHeadFile()); err == nil {
		if _, err := os.Stat(filepath.Join(r.checkoutDir(), ".git")); err == nil {
			r.hubHead = strings.TrimSpace(string(head))
			return nil
		}
	}
	bundle := filepath.Join(r.cfg.Dir, "checkout.bundle")
	defer os.Remove(bundle)
	var head string
	// A download cut short is tried again (the machine's network may be settling).
	for attempt := 1; ; attempt++ {
		var err error
		if head, err = r.download(ctx, bundle); err == nil {
			break
		}
		if stops(err) || ctx.Err() != nil {
			return err
		}
		r.log.Warn("checkout download", "attempt", attempt, "err", err)
		if err := r.hub.backoff.Wait(ctx, attempt, nil); err != nil {
			return err
		}
	}
	if err := r.repo().CreateFromBundle(ctx, bundle, r.hello.Branch); err != nil {
		if ctx.Err() != nil {
			return err
		}
		// git refused what the hub sent, on this machine's disk: starting again would
		// do the same. The hub fails the workspace, saying why.
		_, ferr := r.hub.call(ctx, request{method: "POST", path: "/setup-failed",
			json: runtimewire.SetupFailed{Detail: "the checkout could not be made on the machine: " + err.Error()}}, nil)
		if ferr != nil {
			return ferr
		}
		return fmt.Errorf("check out: %w", err)
	}
	return r.setHubHead(head)
}

// download writes the hub's bundle of the branch to path and returns its head.
func (r *Runtime) download(ctx context.Context, path string) (string, error) {
	resp, err := r.hub.do(ctx, request{method: "GET", path: "/checkout"})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	_, err = f.ReadFrom(resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("download checkout: %w", err)
	}
	return resp.Header.Get(runtimewire.HeadHeader), nil
}

func (r *Runtime) setHubHead(head string) error {
	r.hubHead = head
	return os.WriteFile(r.hubHeadFile(), []byte(head+"\n"), 0o600)
}

// files places a turn's attachments in the checkout, without following symlinks.
func (r *Runtime) files(ctx context.Context, turn *runtimewire.Turn) ([]string, error) {
	var rels []string
	for _, a := range turn.Attachments {
		resp, err := r.hub.do(ctx, request{method: "GET", path: "/attachments/" + a.ID})
		if err != nil {
			return nil, err
		}
		data, err := readAll(resp, core.MaxAssetBytes)
		if err != nil {
			return nil, err
		}
		rel, err := machines.WriteAttachment(r.checkoutDir(), a.ID+"-"+a.Name, data)
		if err != nil {
			return nil, err
		}
		rels = append(rels, rel)
	}
	return rels, nil
}
