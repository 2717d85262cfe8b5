// Command fakeclaude stands in for Claude Code (`claude -p --output-format
// stream-json`) in tests of the approval-required mode. It reads the prompt on
// standard input ("bash: <command>" asks to run that command), writes Claude Code's
// stream-json events (system/init, the assistant's tool_use, the tool_result, the
// result), and asks for the permission as Claude Code does in print mode:
//
//   - with --permission-prompt-tool mcp__<server>__<tool> and --mcp-config, it starts
//     the server from the configuration (command, args, env) and speaks MCP to it over
//     stdio (initialize, tools/list, tools/call), calling the tool with
//     {"tool_name", "input", "tool_use_id"} and reading one text content holding
//     {"behavior":"allow","updatedInput":…} or {"behavior":"deny","message":…}
//     (Claude Code's SDK documentation, "custom permission prompt tool":
//     https://docs.anthropic.com/en/docs/claude-code/sdk);
//   - with --permission-mode dontAsk, the permission is denied without asking.
//
// The result's text says what happened: "allowed: <command run>" or "denied: <message>".
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	session   = "5b0e2c1d-7a4f-4e8b-9c3d-2f1a6b8e0d47"
	toolUseID = "toolu_01AbCdEfGhJkLmNoPqRsTuVw"
)

func main() {
	flags := map[string]string{}
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			flags[args[i]] = args[i+1]
			i++
		} else {
			flags[args[i]] = ""
		}
	}
	prompt, _ := io.ReadAll(os.Stdin)
	command := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(prompt)), "bash:"))
	out := bufio.NewWriter(os.Stdout)
	emit := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	emit(map[string]any{"type": "system", "subtype": "init", "session_id": session, "permissionMode": flags["--permission-mode"],
		"tools": []string{"Bash", "Read", "Edit"}})
	input := map[string]any{"command": command, "description": "Run the command"}
	emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{"role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": toolUseID, "name": "Bash", "input": input}}}})

	// Like Claude Code, what runs on an allow is the permission tool's updatedInput.
	allowed, message, ran := ask(flags, input)
	result := "denied: " + message
	if allowed {
		result = "allowed: " + ran
	}
	emit(map[string]any{"type": "user", "session_id": session, "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": toolUseID, "content": result, "is_error": !allowed}}}})
	emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": result, "session_id": session})
}

// ask decides the permission as Claude Code would; on an allow it returns the command
// of the updatedInput, which is what runs.
func ask(flags map[string]string, input map[string]any) (bool, string, string) {
	tool, ok := flags["--permission-prompt-tool"]
	if !ok {
		if flags["--permission-mode"] == "dontAsk" {
			return false, "dontAsk", ""
		}
		return true, "", input["command"].(string)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(flags["--mcp-config"]), &cfg); err != nil {
		fail("--mcp-config: %v", err)
	}
	parts := strings.SplitN(tool, "__", 3)
	if len(parts) != 3 || parts[0] != "mcp" {
		fail("--permission-prompt-tool %q is not mcp__<server>__<tool>", tool)
	}
	srv, ok := cfg.MCPServers[parts[1]]
	if !ok || srv.Type != "stdio" {
		fail("no stdio MCP server %q in --mcp-config", parts[1])
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "fake"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		fail("MCP server %q: %v", parts[1], err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fail("tools/list: %v", err)
	}
	found := false
	for _, t := range tools.Tools {
		found = found || t.Name == parts[2]
	}
	if !found {
		fail("the MCP server %q has no tool %q", parts[1], parts[2])
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: parts[2],
		Arguments: map[string]any{"tool_name": "Bash", "input": input, "tool_use_id": toolUseID}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		fail("tools/call: %v %+v", err, res)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		fail("the permission tool answered %T, not text", res.Content[0])
	}
	var decision struct {
		Behavior     string         `json:"behavior"`
		UpdatedInput map[string]any `json:"updatedInput"`
		Message      string         `json:"message"`
	}
	if err := json.Unmarshal([]byte(text.Text), &decision); err != nil {
		fail("the permission tool's answer %q: %v", text.Text, err)
	}
	command, _ := decision.UpdatedInput["command"].(string)
	switch {
	case decision.Behavior == "allow" && command != "":
		return true, "", command
	case decision.Behavior == "deny":
		return false, decision.Message, ""
	}
	fail("the permission tool's answer %q is neither allow (with an input) nor deny", text.Text)
	return false, "", ""
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "fakeclaude: "+format+"\n", a...)
	os.Exit(1)
}
