package slack_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/kubetest/kubelet"
)

// A mention in a Slack thread starts a workspace on the kubernetes provider, against a
// real API server: the workspace becomes a Pod, whose runtime reaches the hub over the
// runtime API, and the agent's reply comes back in the thread.
func TestAMentionStartsAWorkspaceThatRunsInAPod(t *testing.T) {
	t.Parallel()
	cluster, cs := kubelet.Cluster(t)
	ns := kubelet.Namespace
	// Pods reach the hub through a proxy: the hub's port is known only once it runs.
	front := hubtest.NewTCPProxy(t)
	f := newFakeSlack(t)
	h := slackHub(t, f, true, hubtest.WithConfig(func(c *hub.Config) {
		kubelet.HubSettings(t, cluster, ns)(c)
		c.RuntimeHubURL = "http://" + front.Addr()
	}))
	front.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	k := kubelet.Start(t, cs, ns, hubtest.WshubBinary(t))
	k.LogOnFailure(t)

	const root = "1700000000.000700"
	if status, _ := deliver(t, h, eventBody("EvPod1", mention(root, "", "<@"+botUser+"> write hello"))); status != 200 {
		t.Fatalf("expected 200 for a signed event, got %d", status)
	}
	posts := f.waitPosts(t, root, "the agent's reply", func(p []post) bool { return len(p) >= 1 })
	if posts[0].Text != "wrote hello.txt" {
		t.Fatalf("expected the reply %q in the thread, got %+v", "wrote hello.txt", posts[0])
	}
	list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any)
	if len(list) != 1 {
		t.Fatalf("expected one workspace, got %d", len(list))
	}
	ws := list[0].(map[string]any)
	if ws["providerId"] != "kubernetes" {
		t.Fatalf("expected the thread's workspace on the kubernetes provider, got %v", ws["providerId"])
	}
	if pods := k.Pods(t, ws["workspaceId"].(string)); len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("expected the workspace in one running Pod, got %d", len(pods))
	}
}
