package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wshub/wshub/core"
)

// approvalSocket is one turn's end of the permission prompt tool: a unix socket in a
// hub-private directory made for the turn, bound into the sandbox, on which each
// connection asks one approval (approval_mcp.go) and gets the decision. Connections
// and asks are bounded: the agent can reach the socket as well as the tool can.
type approvalSocket struct {
	dir, path string
	ln        net.Listener
	ctx       context.Context
	cancel    context.CancelFunc
	approve   func(context.Context, core.ApprovalAsk) core.ApprovalAnswer
	slots     chan struct{}
	mu        sync.Mutex
	asked     int
	wg        sync.WaitGroup
}

const (
	// maxApprovalConns bounds the asks waiting at once on one turn's socket.
	maxApprovalConns = 8
	// approvalReadTimeout bounds reading an ask (a connection that says nothing).
	approvalReadTimeout = 10 * time.Second
	approvalSocketName  = "sock"
)

// maxSocketPath is the longest path a unix socket binds at on Linux (sun_path: 108
// bytes with the NUL).
const maxSocketPath = 107

// approvalDir makes a turn's socket directory, private (0700): in the state directory
// when the socket's path fits there, else in the temporary directory. A process
// runtime's state directory (<data>/machines/<workspace>/run) is deep enough that a
// socket in it could not be bound, and the turn could not ask.
func approvalDir(stateDir string) (string, error) {
	const prefix = "wshub-approval-" // MkdirTemp adds up to 10 digits
	parent := stateDir
	if len(filepath.Join(stateDir, prefix+"0123456789", approvalSocketName)) > maxSocketPath {
		parent = os.TempDir()
	}
	return os.MkdirTemp(parent, prefix+"*")
}

// openApprovals starts serving req.Approve on a new socket; close ends it.
func (r *Runner) openApprovals(ctx context.Context, req core.TurnRequest) (*approvalSocket, error) {
	dir, err := approvalDir(r.stateDir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, approvalSocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s := &approvalSocket{dir: dir, path: path, ln: ln, approve: req.Approve, slots: make(chan struct{}, maxApprovalConns)}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *approvalSocket) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		select {
		case s.slots <- struct{}{}:
		default:
			_ = conn.Close() // too many waiting at once
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			s.serve(conn)
		}()
	}
}

// serve answers one connection's ask.
func (s *approvalSocket) serve(conn net.Conn) {
	defer conn.Close()
	stop := context.AfterFunc(s.ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	_ = conn.SetReadDeadline(time.Now().Add(approvalReadTimeout))
	line, err := bufio.NewReader(io.LimitReader(conn, maxApprovalLine)).ReadBytes('\n')
	var ask approvalAsk
	if err != nil || json.Unmarshal(line, &ask) != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	s.mu.Lock()
	s.asked++
	over := s.asked > maxCommandAsks
	s.mu.Unlock()
	ans := approvalAnswer{Reason: core.ReasonApprovalLimit}
	if !over {
		a := s.approve(s.ctx, core.ApprovalAsk{Key: ask.Key, Tool: ask.Tool, Summary: ask.Summary, Input: ask.Input})
		ans = approvalAnswer{Allow: a.Allow, Reason: a.Reason, Input: a.Input, SHA256: a.InputSHA256}
	}
	out, _ := json.Marshal(ans)
	_, _ = conn.Write(append(out, '\n'))
}

// close stops serving, ends the asks in flight (denied) and removes the socket.
func (s *approvalSocket) close() {
	s.cancel()
	_ = s.ln.Close()
	s.wg.Wait()
	_ = os.RemoveAll(s.dir)
}
