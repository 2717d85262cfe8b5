// Package kubelet plays the node for the real API server of internal/testkit/kubetest, and
// configures hubs to use it. It is apart from kubetest because it imports the hub,
// which the kubernetes adapter's own tests (which use kubetest) must not.
package kubelet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/internal/procgroup"
	"github.com/wshub/wshub/internal/testkit/kubetest"
)

// Kubelet plays the node for a real kube-apiserver (there is none in the envtest
// arrangement), as KWOK does: it runs each Pod the provider creates as a local
// `wshub runtime` process with the Pod's environment (secret references resolved),
// mounts its volume as a directory (one per claim, so a claim outlives its Pods),
// reports it Running, and kills the process when the Pod is deleted. With
// unschedulable set it reports new Pods unschedulable instead.
type Kubelet struct {
	// Unschedulable makes it report new Pods unschedulable.
	Unschedulable atomic.Bool
	// Root holds the Pods' volumes and runtime logs.
	Root string

	t       *testing.T
	cs      kubernetes.Interface
	ns, bin string

	mu    sync.Mutex
	procs map[string]*exec.Cmd // by Pod name
	seen  map[string]bool
}

// Start runs Pods of namespace ns as processes of bin (a wshub binary) until t
// ends.
func Start(t *testing.T, cs kubernetes.Interface, ns, bin string) *Kubelet {
	k := &Kubelet{t: t, cs: cs, ns: ns, bin: bin, Root: t.TempDir(),
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
			_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	return k
}

// sync starts the Pods it has not seen and stops those that are gone.
func (k *Kubelet) sync(ctx context.Context) {
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
			_ = procgroup.Signal(cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			delete(k.procs, name)
		}
	}
}

// start runs a Pod; false means try again (its Secret is not there yet).
func (k *Kubelet) start(ctx context.Context, p *corev1.Pod) bool {
	now := metav1.Now()
	if k.Unschedulable.Load() {
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
			dir = filepath.Join(k.Root, "pods", p.Name)
			if vs := p.Spec.Volumes[0].PersistentVolumeClaim; vs != nil {
				dir = filepath.Join(k.Root, "claims", vs.ClaimName)
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
	// Init containers run first, to their end, as a kubelet runs them; their emptyDir
	// volumes are directories the main container then mounts.
	for _, ic := range p.Spec.InitContainers {
		init := exec.Command(k.bin, k.mapped(p, ic.VolumeMounts, ic.Command[1:])...)
		init.Env, init.Dir, init.Stdout, init.Stderr = env, dir, log, log
		if err := init.Run(); err != nil {
			k.t.Errorf("kubelet: init container %s of %s: %v", ic.Name, p.Name, err)
			return true
		}
	}
	// The image's `wshub` is the test's build, unless the container runs one a volume
	// holds (an init container put it there).
	prog := k.bin
	if mapped := k.mapped(p, c.VolumeMounts, c.Command[:1])[0]; mapped != c.Command[0] {
		prog = mapped
	}
	cmd := exec.Command(prog, c.Command[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
	cmd.SysProcAttr = procgroup.Attr()
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

// mapped rewrites paths under the containers' emptyDir mounts (other than the disk)
// to the directories that stand for them on this host.
func (k *Kubelet) mapped(p *corev1.Pod, mounts []corev1.VolumeMount, args []string) []string {
	out := slices.Clone(args)
	for _, m := range mounts {
		for _, v := range p.Spec.Volumes {
			if v.Name != m.Name || v.EmptyDir == nil || m.Name == "disk" {
				continue
			}
			host := filepath.Join(k.Root, "volumes", p.Name, v.Name)
			if err := os.MkdirAll(host, 0o700); err != nil {
				k.t.Errorf("kubelet: %v", err)
			}
			for i, a := range out {
				if rest, ok := strings.CutPrefix(a, m.MountPath); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
					out[i] = host + rest
				}
			}
		}
	}
	return out
}

// secretFile writes the Secret volume mounted at path's directory as a kubelet does,
// and returns where path's file is on this host; false while the Secret is missing.
func (k *Kubelet) secretFile(ctx context.Context, p *corev1.Pod, path string) (string, bool) {
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
			dir := filepath.Join(k.Root, "secrets", p.Name)
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

// Pods lists the Pods of workspace id.
func (k *Kubelet) Pods(t *testing.T, id string) []corev1.Pod {
	t.Helper()
	l, err := k.cs.CoreV1().Pods(k.ns).List(context.Background(), metav1.ListOptions{LabelSelector: kube.LabelWorkspace + "=" + id})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// LogOnFailure shows what the Pods' runtimes said when t fails.
func (k *Kubelet) LogOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(k.Root, "*", "*", "runtime.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b[max(0, len(b)-3000):])
			}
		}
	})
}

// HubSettings configure a hub's kubernetes provider against cluster, in namespace ns.
func HubSettings(t *testing.T, cluster *kubetest.Cluster, ns string) func(*hub.Config) {
	return func(c *hub.Config) {
		c.Providers = []string{"kubernetes"}
		c.Kubeconfig, c.KubeNamespace, c.KubeImage = cluster.Kubeconfig(t), ns, "registry.example/wshub:test"
		c.KubeServiceAccount, c.KubeStorageClass, c.KubeVolumeSize = "wshub-runtime", "standard", "5Gi"
		c.KubeNodeSelector = map[string]string{"pool": "agents"}
		c.KubeCPU, c.KubeMemoryMiB, c.KubeUnschedulableAfter = 1, 1024, 0
	}
}

// Namespace is the namespace a test's workspaces run in.
const Namespace = "wshub"

// Cluster starts a real API server for t (kubetest.Start, which skips the test where
// it cannot) with Namespace made in it, and returns it with a clientset.
func Cluster(t *testing.T) (*kubetest.Cluster, kubernetes.Interface) {
	t.Helper()
	cluster := kubetest.Start(t)
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cluster, cs
}
