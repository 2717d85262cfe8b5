package replicas_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wshub/wshub/adapters/kube"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/kubetest/kubelet"
)

func TestKubernetesProviderRunsWorkspacesInPods(t *testing.T) {
	t.Parallel()
	cluster, cs := kubelet.Cluster(t)
	ns := kubelet.Namespace
	ctx := context.Background()
	// Pods reach the hub through a proxy: the hub's port is known only once it runs.
	front := hubtest.NewTCPProxy(t)
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) {
		kubelet.HubSettings(t, cluster, ns)(c)
		c.RuntimeHubURL, c.RuntimeHubLostAfter = "http://"+front.Addr(), 7*time.Minute
	}))
	front.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	k := kubelet.Start(t, cs, ns, hubtest.WshubBinary(t))
	k.LogOnFailure(t)

	id := hubtest.CreateOn(t, h, "kubernetes", "write hello")
	ws := hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	if ws["runtimeState"] != "online" || hubtest.Replies(t, h, id)[0] != "completed: wrote hello.txt" {
		t.Fatalf("expected the turn answered from the Pod, got %v %q", ws, hubtest.Replies(t, h, id))
	}

	// The Pod as the provider made it.
	pods := k.Pods(t, id)
	if len(pods) != 1 {
		t.Fatalf("expected one Pod, got %d", len(pods))
	}
	p := pods[0]
	c := p.Spec.Containers[0]
	if c.Image != "registry.example/wshub:test" || strings.Join(c.Command, " ") != "wshub runtime" ||
		p.Spec.ServiceAccountName != "wshub-runtime" || p.Spec.NodeSelector["pool"] != "agents" ||
		c.Resources.Limits.Cpu().String() != "1" || c.Resources.Limits.Memory().String() != "1Gi" ||
		p.Spec.SecurityContext == nil || !*p.Spec.SecurityContext.RunAsNonRoot ||
		*p.Spec.AutomountServiceAccountToken || p.Spec.Volumes[0].PersistentVolumeClaim == nil {
		t.Fatalf("unexpected Pod spec: %+v", p.Spec)
	}
	if len(p.Spec.Volumes) != 2 || p.Spec.Volumes[1].Secret == nil || p.Spec.Volumes[1].Secret.SecretName == "" {
		t.Fatalf("expected the token from a Secret's volume, got %+v", p.Spec.Volumes)
	}
	lostAfter := ""
	for _, e := range c.Env {
		if e.Name == "WSHUB_RUNTIME_HUB_LOST_AFTER" {
			lostAfter = e.Value
		}
		if strings.HasPrefix(e.Name, "WSHUB_RUNTIME_TOKEN") && e.Name != "WSHUB_RUNTIME_TOKEN_FILE" || strings.Contains(e.Value, "wsrt_") {
			t.Fatalf("expected the token from a Secret's file, not the environment: %+v", e)
		}
		if e.Name == "DATABASE_URL" || strings.HasPrefix(e.Name, "WSHUB_CONTENT") {
			t.Fatalf("the Pod must not get %s", e.Name)
		}
	}
	if lostAfter != "7m0s" {
		t.Fatalf("expected the hub's WSHUB_RUNTIME_HUB_LOST_AFTER passed to the Pod, got %q", lostAfter)
	}
	secrets, _ := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id})
	if len(secrets.Items) != 1 || len(secrets.Items[0].OwnerReferences) != 1 || secrets.Items[0].OwnerReferences[0].UID != p.UID {
		t.Fatalf("expected the token's Secret owned by the Pod, got %+v", secrets.Items)
	}

	// Pause deletes the Pod and keeps the disk; a message brings a new Pod on it.
	if moved, err := h.Service.Sweeps.SweepLifecycle(ctx, core.LifecycleConfig{IdleTimeout: time.Nanosecond}, time.Now()); err != nil || moved != 1 {
		t.Fatalf("expected the idle sweep to pause the workspace, got %d, %v", moved, err)
	}
	hubtest.WaitFor(t, h, id, "paused", func(ws map[string]any) bool { return ws["state"] == "paused" })
	if n := len(k.Pods(t, id)); n != 0 {
		t.Fatalf("expected the paused workspace's Pod deleted, %d left", n)
	}
	claims, _ := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id})
	if len(claims.Items) != 1 {
		t.Fatalf("expected the disk kept across the pause, got %d claims", len(claims.Items))
	}
	hubtest.Send(t, h, id, "write again")
	hubtest.WaitFor(t, h, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	if got := hubtest.Replies(t, h, id); got[1] != "completed: wrote again.txt" {
		t.Fatalf("expected the resumed Pod to answer, got %q", got)
	}
	if pods := k.Pods(t, id); len(pods) != 1 || pods[0].Name == p.Name {
		t.Fatalf("expected one new Pod after the resume, got %d", len(pods))
	}

	// Delete removes the Pod, its Secret and the disk.
	if _, err := h.Service.Admin.DeleteWorkspace(ctx, id); err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 30*time.Second, "everything of the deleted workspace removed", func() error {
		pods := k.Pods(t, id)
		claims, _ := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id})
		secrets, _ := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id})
		// A claim keeps its kubernetes.io/pvc-protection finalizer until a controller
		// manager (absent here) sees no Pod using it: deleted means marked for deletion.
		live := 0
		for _, c := range claims.Items {
			if c.DeletionTimestamp == nil {
				live++
			}
		}
		if len(pods)+live+len(secrets.Items) > 0 {
			return fmt.Errorf("left %d pods, %d claims, %d secrets", len(pods), live, len(secrets.Items))
		}
		return nil
	})

	// A Pod no node can take fails its workspace with a reason.
	k.Unschedulable.Store(true)
	id = hubtest.CreateOn(t, h, "kubernetes", "hello")
	ws = hubtest.WaitFor(t, h, id, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })
	if ws["statusCode"] != "provision_failed:unschedulable" {
		t.Fatalf("expected provision_failed:unschedulable, got %v", ws["statusCode"])
	}
	eventually.Eventually(t, 30*time.Second, "the unschedulable Pod deleted", func() bool { return len(k.Pods(t, id)) == 0 })
}

// Two hubs with data directories of their own (no shared volume) on one database,
// both running the kubernetes provider's worker, behind a balancer the Pods reach them
// through: a workspace started at one runs in a Pod, its turns' messages, attachments
// and commits go through both, and each is answered once, in order, and pushed.
func TestKubernetesWorkspacesServedByTwoHubsWithNoSharedVolume(t *testing.T) {
	t.Parallel()
	cluster, cs := kubelet.Cluster(t)
	ns := kubelet.Namespace
	balancer := hubtest.NewRoundRobin(t)
	a := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) {
		kubelet.HubSettings(t, cluster, ns)(c)
		c.Blobs = hub.BlobsPostgres
		c.RuntimeHubURL = balancer.URL
	}))
	b := a.ReplicaWith(t, func(c *hub.Config) { c.DataDir, c.HostID = t.TempDir(), "replica-b" })
	if err := balancer.SetTargets(a.URL, b.URL); err != nil {
		t.Fatal(err)
	}
	k := kubelet.Start(t, cs, ns, hubtest.WshubBinary(t))
	k.LogOnFailure(t)
	p, upstream := hubtest.PushingProject(t, a)

	id := hubtest.CreateOn(t, b, "kubernetes", "write one", "projectId", p.ID)
	hubtest.WaitFor(t, a, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	hubtest.Send(t, a, id, "write two")
	hubtest.WaitFor(t, b, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	up := b.Call("POST", "/v1/api/workspaces/"+id+"/attachments", b.Key, []byte("from b"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	asset := up.Body["asset"].(map[string]any)["assetId"].(string)
	hubtest.Send(t, a, id, "attachments", "attachments", []string{asset})
	ws := hubtest.WaitFor(t, a, id, "idle after three turns", hubtest.IdleAfterTurns(3))

	got := hubtest.Replies(t, a, id)
	want := []string{"completed: wrote one.txt", "completed: wrote two.txt", "completed: .context/files/" + asset + "-notes.txt=from b"}
	if len(got) != len(want) {
		t.Fatalf("expected %d replies, one per turn, got %q", len(want), got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("expected reply %d to start %q, got %q", i, want[i], got[i])
		}
	}
	for _, name := range []string{"one", "two"} {
		if out := hubtest.Git(t, upstream, "show", ws["branch"].(string)+":"+name+".txt"); out != name {
			t.Errorf("expected %s.txt pushed, got %q", name, out)
		}
	}
	if pods := k.Pods(t, id); len(pods) != 1 {
		t.Fatalf("expected the workspace in one Pod, got %d", len(pods))
	}
	if served := balancer.Served(); served[strings.TrimPrefix(a.URL, "http://")] == 0 || served[strings.TrimPrefix(b.URL, "http://")] == 0 {
		t.Errorf("expected the Pod's calls spread over both hubs, got %v", served)
	}
}
