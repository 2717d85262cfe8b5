package agents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wshub/wshub/core"
)

// Claude Code's permission prompt tool. In the approval-required mode
// Claude Code runs with --permission-prompt-tool mcp__wshub__approve and an MCP
// server named wshub: `wshub approval-mcp`, started by Claude Code inside the sandbox
// and speaking MCP over its stdio (the official Go SDK). Each time Claude Code needs a
// permission it calls the tool with
//
//	{"tool_name": "Bash", "input": {"command": "rm -rf build"}, "tool_use_id": "toolu_…"}
//
// and expects one text content holding either
//
//	{"behavior": "allow", "updatedInput": {…the input…}}
//	{"behavior": "deny", "message": "why"}
//
// (Claude Code's SDK documentation, "custom permission prompt tool":
// https://docs.anthropic.com/en/docs/claude-code/sdk; the input schema is Claude
// Code's PermissionPromptToolResultSchema: tool_name, input, tool_use_id optional).
// The tool asks the runner over a unix socket the runner serves for the turn
// (approval_socket.go): one JSON line each way. The agent itself could connect to
// that socket too; it can only ask, never decide.

// The MCP names Claude Code is told: server "wshub", tool "approve".
const (
	approvalServerName   = "wshub"
	approvalToolName     = "approve"
	permissionPromptTool = "mcp__" + approvalServerName + "__" + approvalToolName
	// ApprovalSocketEnv names the socket in the MCP server's environment.
	ApprovalSocketEnv = "WSHUB_APPROVAL_SOCKET"
	// maxApprovalLine bounds one line on the approval socket: an ask or answer with
	// a whole tool input (over core.MaxApprovalInput too, so the hub says it is).
	maxApprovalLine = 1 << 20
)

// permissionInput is what Claude Code passes the permission prompt tool.
type permissionInput struct {
	ToolName  string         `json:"tool_name" jsonschema:"the tool Claude Code wants to use"`
	Input     map[string]any `json:"input" jsonschema:"the tool's input"`
	ToolUseID string         `json:"tool_use_id,omitempty" jsonschema:"the tool use this permission is for"`
}

// approvalAsk and approvalAnswer are the approval socket's lines.
type approvalAsk struct {
	Key     string          `json:"key"`
	Tool    string          `json:"tool"`
	Summary string          `json:"summary"`
	Input   json.RawMessage `json:"input,omitempty"`
}

// approvalAnswer's Input and SHA256, on an allow: the input as shown and approved,
// and its hash (core.ApprovalAnswer).
type approvalAnswer struct {
	Allow  bool            `json:"allow"`
	Reason string          `json:"reason,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
	SHA256 string          `json:"sha256,omitempty"`
}

// reasonNotApproved is the denial of an allow whose input is not the one asked about.
const reasonNotApproved = "Denied: the approved input is not the one asked about."

// ServeApprovalMCP serves the permission prompt tool over in and out until the client
// (Claude Code) closes them; each call is asked of the runner over socketPath.
func ServeApprovalMCP(ctx context.Context, socketPath string, in io.ReadCloser, out io.WriteCloser) error {
	s := mcp.NewServer(&mcp.Implementation{Name: approvalServerName, Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: approvalToolName,
		Description: "Asks the people reviewing this wshub workspace whether a tool may be used."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in permissionInput) (*mcp.CallToolResult, any, error) {
			input := in.Input
			if input == nil {
				input = map[string]any{}
			}
			raw, err := json.Marshal(input)
			if err != nil {
				return nil, nil, err
			}
			ans := askRunner(ctx, socketPath, approvalAsk{Key: in.ToolUseID, Tool: in.ToolName, Summary: askSummary(in.Input), Input: raw})
			payload := map[string]any{"behavior": "deny", "message": ans.Reason}
			if ans.Allow {
				// Claude Code runs updatedInput: it is the input that was shown and
				// approved, checked against the hash of what was asked.
				if approved, ok := approvedInput(raw, ans); ok {
					payload = map[string]any{"behavior": "allow", "updatedInput": approved}
				} else {
					payload["message"] = reasonNotApproved
				}
			} else if ans.Reason == "" {
				payload["message"] = "Denied."
			}
			text, err := json.Marshal(payload)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil, nil
		})
	return s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// approvedInput is the input an allow approved, as Claude Code's updatedInput: ok
// only when the answer's input hashes to its sha256 and that is the hash of what was
// asked (asked).
func approvedInput(asked []byte, ans approvalAnswer) (map[string]any, bool) {
	if !core.SameInput(asked, ans.SHA256) || !core.SameInput(ans.Input, ans.SHA256) {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(ans.Input))
	d.UseNumber()
	var approved map[string]any
	if d.Decode(&approved) != nil || approved == nil {
		return nil, false
	}
	return approved, true
}

// askRunner asks the runner's socket; any failure is a denial that says why.
func askRunner(ctx context.Context, socketPath string, ask approvalAsk) approvalAnswer {
	if socketPath == "" {
		return approvalAnswer{Reason: "Denied: " + ApprovalSocketEnv + " is not set."}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socketPath)
	if err != nil {
		return approvalAnswer{Reason: "Denied: the hub could not be asked."}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	line, _ := json.Marshal(ask)
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return approvalAnswer{Reason: "Denied: the hub could not be asked."}
	}
	var ans approvalAnswer
	r := bufio.NewReader(io.LimitReader(conn, maxApprovalLine))
	b, err := r.ReadBytes('\n')
	if err != nil || json.Unmarshal(b, &ans) != nil {
		return approvalAnswer{Reason: "Denied: the hub did not answer."}
	}
	return ans
}

// askSummary says what a tool use is about: Bash's command, the file an edit
// touches, the URL fetched (as the turn's events say it); else the input, compact.
// The hub cuts it, marked as cut; the whole input goes with the ask.
func askSummary(input map[string]any) string {
	if s := inputSummary(input); s != "" || len(input) == 0 {
		return s
	}
	b, err := json.Marshal(input)
	if err != nil {
		return ""
	}
	return strings.ToValidUTF8(string(b), "")
}

// approvalMCPConfig is the --mcp-config that makes Claude Code start the permission
// prompt tool's server: self (the wshub binary) approval-mcp, told the socket.
func approvalMCPConfig(self, socket string) string {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{approvalServerName: map[string]any{
		"type": "stdio", "command": self, "args": []string{"approval-mcp"},
		"env": map[string]string{ApprovalSocketEnv: socket}}}})
	return string(b)
}
