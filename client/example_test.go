package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/wshub/wshub/client"
)

// A CI step: start a workspace on a branch, wait for the agent's first turn, and fail
// when it did not complete.
func Example() {
	c, err := client.New(os.Getenv("WSHUB_URL"), os.Getenv("WSHUB_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ws, err := c.CreateWorkspace(ctx, client.CreateWorkspaceRequest{
		Prompt: "Fix the failing test in ./pkg/parser", Agent: "agent_1", Model: "sonnet", Branch: "ci/fix-parser",
	})
	if err != nil {
		log.Fatal(err)
	}
	page, err := c.ListMessages(ctx, ws.WorkspaceID, 0, 1)
	if err != nil {
		log.Fatal(err)
	}
	reply, err := c.WaitForReply(ctx, ws.WorkspaceID, page.Messages[0].MessageID)
	if err != nil {
		log.Fatal(err)
	}
	if reply.Outcome() != "completed" { // also failed or expired, with no turn and no Assistant
		log.Fatalf("the agent's turn ended %s", reply.Outcome())
	}
	fmt.Println(reply.Assistant.Text)
}

// Errors carry the API's code.
func ExampleError() {
	c, err := client.New("https://wshub.example.com", "svc_...")
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.GetWorkspace(context.Background(), "ws_unknown")
	var e *client.Error
	if errors.As(err, &e) && e.Code == "cloud_workspace_not_found" {
		fmt.Println("no such workspace")
	}
}
