package runtimeapi_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/adapters/gitrepo"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/wsruntime"
)

// syncLog is a runtime's log, written by the runtime and read by the test.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// inProcessRuntime is a real runtime (wsruntime.Run) in the test's process, so that the
// test sees what Run returns: the `process` machine of fakeMachine only hands it the
// token and directory.
type inProcessRuntime struct {
	log   *syncLog
	ended chan struct{} // closed when Run has returned err
	err   error
}

func startInProcessRuntime(t *testing.T, hubURL, token, dir string, lostAfter time.Duration) *inProcessRuntime {
	t.Helper()
	author, err := gitrepo.ParseAuthor("")
	if err != nil {
		t.Fatal(err)
	}
	r := &inProcessRuntime{log: &syncLog{}, ended: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	rt, err := wsruntime.New(ctx, wsruntime.Config{HubURL: hubURL, Token: token, Dir: dir, Author: author,
		HubLostAfter: lostAfter, Log: slog.New(slog.NewJSONHandler(r.log, nil)),
		Agents: agents.Options{Commands: map[string]string{"agent_1": hubtest.FakeAgent(t)}}})
	if err != nil {
		cancel()
		t.Fatalf("runtime: %v", err)
	}
	go func() { defer close(r.ended); r.err = rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.ended
		if t.Failed() {
			t.Logf("runtime log:\n%s", r.log.String())
		}
	})
	return r
}

// wait returns what Run returned, failing the test if it does not return in time.
func (r *inProcessRuntime) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-r.ended:
		return r.err
	case <-time.After(within):
		t.Fatalf("expected the runtime to end within %s; its log:\n%s", within, r.log.String())
		return nil
	}
}
