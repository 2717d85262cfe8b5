package environment_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/kubetest/kubelet"
)

// On Kubernetes the workspace's Pod runs the setup as the process provider's runtime
// does, the next Pod restores the cache the first saved, and the project's secrets
// reach a Pod over the runtime API only: no Pod, Secret or ConfigMap of the namespace
// holds a secret's value.
func TestSetupOnKubernetesKeepsSecretsOutOfThePod(t *testing.T) {
	t.Parallel()
	cluster, cs := kubelet.Cluster(t)
	ns := kubelet.Namespace
	ctx := context.Background()
	front := hubtest.NewTCPProxy(t)
	h := startHub(t, withCaches, hubtest.WithConfig(func(c *hub.Config) {
		kubelet.HubSettings(t, cluster, ns)(c)
		c.RuntimeHubURL, c.RuntimeHubLostAfter = "http://"+front.Addr(), 7*time.Minute
		c.KubeImageAllow = []string{"node:*", "ghcr.io/acme/*"}
	}))
	front.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	k := kubelet.Start(t, cs, ns, hubtest.WshubBinary(t))
	k.LogOnFailure(t)

	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{
		"setup": "echo \"installing with $REGISTRY_TOKEN\"; [ -e installed ] || echo ok > installed",
		"env": {"STAGE": "pod"}, "cache": [{"paths": ["installed"]}]}`})
	const secret = "ghp_pod_must_not_hold_7a1c"
	if _, err := h.Service.ProjectSecrets.Set(ctx, core.ProjectSecretInput{ProjectID: p.ID, Name: "REGISTRY_TOKEN", Value: secret}); err != nil {
		t.Fatal(err)
	}
	id := create(t, h, p, `cat installed; echo "$STAGE"`, "providerId", "kubernetes")
	waitFor(t, h, id, "the first turn done", idleAfterTurns(1))
	if got := reply(t, h, id, 2); got != "ok\npod" {
		t.Errorf("the agent in the Pod should find the setup's work and the environment: %q", got)
	}
	if got := setupOutput(events(t, h, id)); !strings.HasPrefix(got, "cache installed: none saved for key") ||
		!strings.Contains(got, "installing with ****\n") || !strings.Contains(got, "cache installed: saved 1 files") {
		t.Errorf("setup output %q", got)
	}
	// The next Pod restores what the first saved: every Pod shares the caches.
	again := create(t, h, p, "", "providerId", "kubernetes")
	waitFor(t, h, again, "the second workspace ready", state("ready"))
	if got := setupOutput(events(t, h, again)); !strings.HasPrefix(got, "cache installed: restored 1 files") {
		t.Errorf("the second Pod's setup output %q", got)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		t.Fatalf("the workspace's Pod: %v %v", pods, err)
	}
	secrets, _ := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	maps, _ := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	for what, obj := range map[string]any{"pods": pods, "secrets": secrets, "configmaps": maps} {
		b, _ := json.Marshal(obj)
		if strings.Contains(string(b), secret) {
			t.Errorf("the namespace's %s hold the project's secret", what)
		}
	}
	t.Run("project images", func(t *testing.T) { projectImages(t, h, k) })
}

// projectImages: a project may name its Pods' image when the operator allows it: an init container
// of the hub's image installs the runtime into the Pod, whose runtime's container runs
// the project's image. An image the operator does not allow fails the workspace in
// words, before any Pod is made.
// (One API server for both: starting one is the most of either's time.)
func projectImages(t *testing.T, h *hubtest.Hub, k *kubelet.Kubelet) {
	node, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{"image": "node:22", "setup": "echo set up"}`})
	id := create(t, h, node, "echo hello from the image", "providerId", "kubernetes")
	ws := waitFor(t, h, id, "the first turn done", idleAfterTurns(1))
	if got := reply(t, h, id, 2); got != "hello from the image" {
		t.Errorf("reply %q: %s", got, h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Raw)
	}
	if detail, _ := ws["statusDetail"].(string); strings.Contains(detail, "not applied") {
		t.Errorf("the image applies on Kubernetes: %q", detail)
	}
	pods := k.Pods(t, id)
	if len(pods) != 1 || len(pods[0].Spec.InitContainers) != 1 {
		t.Fatalf("one Pod with the runtime's installer: %+v", pods)
	}
	main, init := pods[0].Spec.Containers[0], pods[0].Spec.InitContainers[0]
	if main.Image != "node:22" || main.Command[0] != "/opt/wshub-runtime/wshub" ||
		init.Image != "registry.example/wshub:test" || strings.Join(init.Command, " ") != "wshub install-runtime /opt/wshub-runtime" {
		t.Errorf("the runtime's container in the project's image, run from what the hub's image installed: %+v / %+v", main, init)
	}

	python, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{"image": "python:3.12"}`})
	refused := create(t, h, python, "echo never", "providerId", "kubernetes")
	ws = waitFor(t, h, refused, "the workspace failed", state("failed"))
	detail, _ := ws["statusDetail"].(string)
	if ws["statusCode"] != "setup_failed:image_refused" || !strings.Contains(detail, "python:3.12") ||
		!strings.Contains(detail, "WSHUB_KUBE_IMAGE_ALLOW") {
		t.Errorf("refused in words: %v %q", ws["statusCode"], detail)
	}
	if pods := k.Pods(t, refused); len(pods) != 0 {
		t.Errorf("no Pod for a refused image: %d", len(pods))
	}
}
