package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/kubetest"
)

// apply creates every object of the deployment manifests (deploy/kubernetes) on a
// real API server, which validates them as a cluster would.
func apply(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	files, _ := filepath.Glob("../../deploy/kubernetes/*.yaml")
	if len(files) == 0 {
		t.Fatal("no manifests in deploy/kubernetes")
	}
	// The namespace first; the secrets example too, as an operator would fill it in.
	objs := map[int][]runtime.Object{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			order := 1
			if _, ok := obj.(*corev1.Namespace); ok {
				order = 0
			}
			objs[order] = append(objs[order], obj)
		}
	}
	for _, o := range append(objs[0], objs[1]...) {
		var err error
		switch o := o.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Secret:
			_, err = cs.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.PersistentVolumeClaim:
			_, err = cs.CoreV1().PersistentVolumeClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("the test cannot apply a %T", o)
		}
		if err != nil {
			t.Fatalf("apply %T: %v", o, err)
		}
	}
}

// The manifests apply, and the hub's service account may do what the provider does,
// in its namespace, and nothing else: the provider runs here with that account's
// token.
func TestManifestsAndTheHubsPermissions(t *testing.T) {
	cluster := kubetest.Start(t)
	admin, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, admin)
	ctx := context.Background()
	tr, err := admin.CoreV1().ServiceAccounts("wshub").CreateToken(ctx, "wshub-hub", &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asHub := cluster.TokenConfig(tr.Status.Token)
	m, err := New(asHub, Config{Namespace: "wshub", Image: "wshub:test", HubURL: "http://wshub:8080", ServiceAccount: "wshub-runtime",
		StorageClass: "standard", VolumeSize: "1Gi", Size: core.ProviderSize{ID: "standard", VCPUCount: 1, MemoryMiB: 512}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	failures := map[string]string{}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go m.Watch(wctx, 0, func(_ context.Context, id, code, _ string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		failures[id] = code
		return true, nil
	})

	ws := &core.Workspace{ID: "ws_0123456789ABCDEF"}
	if err := m.Start(ctx, ws, "wsrt_token"); err != nil {
		t.Fatalf("start as the hub's account: %v", err)
	}
	pods, err := admin.CoreV1().Pods("wshub").List(ctx, metav1.ListOptions{LabelSelector: LabelWorkspace + "=" + ws.ID})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("expected the workspace's Pod, got %v %v", pods, err)
	}
	// The cluster cannot pull the image: the watcher reports it.
	p := pods.Items[0]
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "runtime", Image: "wshub:test",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	if _, err := admin.CoreV1().Pods("wshub").UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		code := failures[ws.ID]
		mu.Unlock()
		if code == "provision_failed:image_pull" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("expected the watcher to report image_pull, got %q", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := m.Delete(ctx, ws); err != nil {
		t.Fatalf("delete as the hub's account: %v", err)
	}

	// Nothing outside its namespace, and no other kind of object.
	hub, _ := kubernetes.NewForConfig(asHub)
	if _, err := hub.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("expected the hub forbidden from other namespaces' secrets, got %v", err)
	}
	if _, err := hub.AppsV1().Deployments("wshub").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("expected the hub forbidden from deployments, got %v", err)
	}
}

func TestPodFailures(t *testing.T) {
	now := time.Now()
	unsched := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}
	cases := []struct {
		name   string
		status corev1.PodStatus
		code   string
	}{
		{"running", corev1.PodStatus{Phase: corev1.PodRunning}, ""},
		{"unschedulable for a minute, 2 allowed", corev1.PodStatus{Conditions: []corev1.PodCondition{unsched}}, ""},
		{"image", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}}, "provision_failed:image_pull"},
		{"oom", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{LastTerminationState: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled"}}}}}, "machine_lost:oom_killed"},
		{"crash", corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{LastTerminationState: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{Reason: "Error"}}}}}, ""},
	}
	for _, c := range cases {
		code, _, failed := podFailure(&corev1.Pod{Status: c.status}, now, 2*time.Minute)
		if code != c.code || failed != (c.code != "") {
			t.Errorf("%s: expected %q, got %q %v", c.name, c.code, code, failed)
		}
	}
	if code, _, _ := podFailure(&corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{unsched}}}, now, 30*time.Second); code != "provision_failed:unschedulable" {
		t.Errorf("expected unschedulable after its grace, got %q", code)
	}
}
