package hub_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wshub/wshub/adapters/kube"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/kubetest"
)

// kubelet plays the node for a real kube-apiserver (there is none in the envtest
// arrangement), as KWOK does: it runs each Pod the provider creates as a local
// `wshub runtime` process with the Pod's environment (secret references resolved),
// mounts its volume as a directory (one per claim, so a claim outlives its Pods),
// reports it Running, and kills the process when the Pod is deleted. With
// unschedulable set it reports new Pods unschedulable instead.
type kubelet struct {
	t             *testing.T
	cs            kubernetes.Interface
	ns, bin, root string
	unschedulable atomic.Bool

	mu    sync.Mutex
	procs map[string]*exec.Cmd // by Pod name
	seen  map[string]bool
}

func startKubelet(t *testing.T, cs kubernetes.Interface, ns string) *kubelet {
	k := &kubelet{t: t, cs: cs, ns: ns, bin: hubtest.WshubBinary(t), root: t.TempDir(),
		procs: map[string]*exec.Cmd{}, seen: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			k.sync(ctx)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, cmd := range k.procs {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	return k
}

// sync starts the Pods it has not seen and stops those that are gone.
func (k *kubelet) sync(ctx context.Context) {
	pods, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	live := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		live[p.Name] = true
		if k.seen[p.Name] || p.DeletionTimestamp != nil {
			continue
		}
		if k.start(ctx, p) {
			k.seen[p.Name] = true
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for name, cmd := range k.procs {
		if !live[name] {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			delete(k.procs, name)
		}
	}
}

// start runs a Pod; false means try again (its Secret is not there yet).
func (k *kubelet) start(ctx context.Context, p *corev1.Pod) bool {
	now := metav1.Now()
	if k.unschedulable.Load() {
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.", LastTransitionTime: now}}}
		_, err := k.cs.CoreV1().Pods(k.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err == nil
	}
	c := p.Spec.Containers[0]
	env := []string{"PATH=" + os.Getenv("PATH")}
	dir := ""
	for _, e := range c.Env {
		v := e.Value
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			s, err := k.cs.CoreV1().Secrets(k.ns).Get(ctx, r.SecretKeyRef.Name, metav1.GetOptions{})
			if err != nil {
				return false // as a kubelet does: wait for the Secret
			}
			v = string(s.Data[r.SecretKeyRef.Key])
		}
		if e.Name == "WSHUB_RUNTIME_TOKEN_FILE" {
			// The Secret's volume, as a kubelet mounts it: its keys as files.
			path, ok := k.secretFile(ctx, p, e.Value)
			if !ok {
				return false
			}
			v = path
		}
		if e.Name == "WSHUB_RUNTIME_DIR" {
			// The volume mounted there: a directory per claim, or per Pod for emptyDir.
			dir = filepath.Join(k.root, "pods", p.Name)
			if vs := p.Spec.Volumes[0].PersistentVolumeClaim; vs != nil {
				dir = filepath.Join(k.root, "claims", vs.ClaimName)
			}
			v = dir
		}
		env = append(env, e.Name+"="+v)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		k.t.Errorf("kubelet: %v", err)
		return true
	}
	log, err := os.OpenFile(filepath.Join(dir, "runtime.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		k.t.Errorf("kubelet: %v", err)
		return true
	}
	defer log.Close()
	cmd := exec.Command(k.bin, c.Command[1:]...) // the image's `wshub` is the test's build
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		k.t.Errorf("kubelet: start %s: %v", p.Name, err)
		return true
	}
	k.mu.Lock()
	k.procs[p.Name] = cmd
	k.mu.Unlock()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	if _, err := k.cs.CoreV1().Pods(k.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		k.t.Logf("kubelet: status of %s: %v", p.Name, err)
	}
	return true
}

// secretFile writes the Secret volume mounted at path's directory as a kubelet does,
// and returns where path's file is on this host; false while the Secret is missing.
func (k *kubelet) secretFile(ctx context.Context, p *corev1.Pod, path string) (string, bool) {
	mountDir, key := filepath.Split(path)
	for _, m := range p.Spec.Containers[0].VolumeMounts {
		if filepath.Clean(m.MountPath) != filepath.Clean(mountDir) {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			s, err := k.cs.CoreV1().Secrets(k.ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return "", false
			}
			dir := filepath.Join(k.root, "secrets", p.Name)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				k.t.Errorf("kubelet: %v", err)
				return "", false
			}
			file := filepath.Join(dir, key)
			if err := os.WriteFile(file, s.Data[key], 0o400); err != nil && !os.IsPermission(err) {
				k.t.Errorf("kubelet: %v", err)
			}
			return file, true
		}
	}
	k.t.Errorf("kubelet: nothing is mounted at %s", mountDir)
	return "", false
}

func (k *kubelet) pods(t *testing.T, id string) []corev1.Pod {
	t.Helper()
	l, err := k.cs.CoreV1().Pods(k.ns).List(context.Background(), metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestKubernetesProviderRunsWorkspacesInPods(t *testing.T) {
	t.Parallel()
	cluster := kubetest.Start(t)
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := "wshub"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods reach the hub through a proxy: the hub's port is known only once it runs.
	front := hubtest.NewTCPProxy(t)
	h := startRuntime(t, hubtest.WithConfig(func(c *hub.Config) {
		kubeSettings(t, cluster, ns)(c)
		c.RuntimeHubURL, c.RuntimeHubLostAfter = "http://"+front.Addr(), 7*time.Minute
	}))
	front.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	k := startKubelet(t, cs, ns)
	k.logOnFailure(t)

	id := createOn(t, h, "kubernetes", "write hello")
	ws := waitFor(t, h, id, "idle after one turn", idleAfterTurns(1))
	if ws["runtimeState"] != "online" || replies(t, h, id)[0] != "completed: wrote hello.txt" {
		t.Fatalf("expected the turn answered from the Pod, got %v %q", ws, replies(t, h, id))
	}

	// The Pod as the provider made it.
	pods := k.pods(t, id)
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
	waitFor(t, h, id, "paused", func(ws map[string]any) bool { return ws["state"] == "paused" })
	if n := len(k.pods(t, id)); n != 0 {
		t.Fatalf("expected the paused workspace's Pod deleted, %d left", n)
	}
	claims, _ := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id})
	if len(claims.Items) != 1 {
		t.Fatalf("expected the disk kept across the pause, got %d claims", len(claims.Items))
	}
	send(t, h, id, "write again")
	waitFor(t, h, id, "idle after two turns", idleAfterTurns(2))
	if got := replies(t, h, id); got[1] != "completed: wrote again.txt" {
		t.Fatalf("expected the resumed Pod to answer, got %q", got)
	}
	if pods := k.pods(t, id); len(pods) != 1 || pods[0].Name == p.Name {
		t.Fatalf("expected one new Pod after the resume, got %d", len(pods))
	}

	// Delete removes the Pod, its Secret and the disk.
	if _, err := h.Service.Admin.DeleteWorkspace(ctx, id); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods := k.pods(t, id)
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
		if len(pods)+live+len(secrets.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expected everything of the deleted workspace removed, left %d pods, %d claims, %d secrets", len(pods), live, len(secrets.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A Pod no node can take fails its workspace with a reason.
	k.unschedulable.Store(true)
	id = createOn(t, h, "kubernetes", "hello")
	ws = waitFor(t, h, id, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })
	if ws["statusCode"] != "provision_failed:unschedulable" {
		t.Fatalf("expected provision_failed:unschedulable, got %v", ws["statusCode"])
	}
	deadline = time.Now().Add(30 * time.Second)
	for len(k.pods(t, id)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("expected the unschedulable Pod deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kubeSettings configure the kubernetes provider against cluster, in namespace ns.
func kubeSettings(t *testing.T, cluster *kubetest.Cluster, ns string) func(*hub.Config) {
	return func(c *hub.Config) {
		c.Providers = []string{"kubernetes"}
		c.Kubeconfig, c.KubeNamespace, c.KubeImage = cluster.Kubeconfig(t), ns, "registry.example/wshub:test"
		c.KubeServiceAccount, c.KubeStorageClass, c.KubeVolumeSize = "wshub-runtime", "standard", "5Gi"
		c.KubeNodeSelector = map[string]string{"pool": "agents"}
		c.KubeCPU, c.KubeMemoryMiB, c.KubeUnschedulableAfter = 1, 1024, 0
	}
}

// logOnFailure shows what the Pods' runtimes said when t fails.
func (k *kubelet) logOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(k.root, "*", "*", "runtime.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b[max(0, len(b)-3000):])
			}
		}
	})
}

// Two hubs with data directories of their own (no shared volume) on one database,
// both running the kubernetes provider's worker, behind a balancer the Pods reach them
// through: a workspace started at one runs in a Pod, its turns' messages, attachments
// and commits go through both, and each is answered once, in order, and pushed.
func TestKubernetesWorkspacesServedByTwoHubsWithNoSharedVolume(t *testing.T) {
	t.Parallel()
	cluster := kubetest.Start(t)
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := "wshub"
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	balancer := hubtest.NewRoundRobin(t)
	a := startRuntime(t, hubtest.WithConfig(func(c *hub.Config) {
		kubeSettings(t, cluster, ns)(c)
		c.Blobs = hub.BlobsPostgres
		c.RuntimeHubURL = balancer.URL
	}))
	b := a.ReplicaWith(t, func(c *hub.Config) { c.DataDir = t.TempDir() })
	balancer.SetTargets(a.URL, b.URL)
	k := startKubelet(t, cs, ns)
	k.logOnFailure(t)
	p, upstream := pushingProject(t, a)

	id := createOn(t, b, "kubernetes", "write one", "projectId", p.ID)
	waitFor(t, a, id, "idle after one turn", idleAfterTurns(1))
	send(t, a, id, "write two")
	waitFor(t, b, id, "idle after two turns", idleAfterTurns(2))
	up := b.Call("POST", "/v1/api/workspaces/"+id+"/attachments", b.Key, []byte("from b"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	asset := up.Body["asset"].(map[string]any)["assetId"].(string)
	send(t, a, id, "attachments", "attachments", []string{asset})
	ws := waitFor(t, a, id, "idle after three turns", idleAfterTurns(3))

	got := replies(t, a, id)
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
	if pods := k.pods(t, id); len(pods) != 1 {
		t.Fatalf("expected the workspace in one Pod, got %d", len(pods))
	}
	if served := balancer.Served(); served[a.URL] == 0 || served[b.URL] == 0 {
		t.Errorf("expected the Pod's calls spread over both hubs, got %v", served)
	}
}
