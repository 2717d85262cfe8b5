package kubetest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestSmoke starts one cluster (a few seconds) and runs the checks on it.
func TestSmoke(t *testing.T) {
	c := Start(t)
	t.Run("pod", func(t *testing.T) { testPod(t, c) })
	t.Run("kubeconfig", func(t *testing.T) { testKubeconfig(t, c) })
}

// testPod walks a Pod through what a machine provider will do: create it,
// read it back, mark it Running as the kubelet would, and see that change via
// list and watch.
func testPod(t *testing.T, c *Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}

	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "smoke-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	pods := cs.CoreV1().Pods(ns.Name)

	// Watch from the start so the Running update is seen as an event.
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "box").String()})
	if err != nil {
		t.Fatalf("watch pods: %v", err)
	}
	defer w.Stop()

	created, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "box", Labels: map[string]string{"app": "smoke"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "3600"}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod: %v", err)
	}

	got, err := pods.Get(ctx, "box", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod: %v", err)
	}
	if got.UID != created.UID || got.Spec.Containers[0].Image != "busybox" {
		t.Fatalf("get pod: got uid %s image %q, want uid %s image busybox", got.UID, got.Spec.Containers[0].Image, created.UID)
	}
	// No scheduler or kubelet: the Pod stays Pending until someone says otherwise.
	if got.Status.Phase != corev1.PodPending {
		t.Errorf("new pod phase = %q, want Pending", got.Status.Phase)
	}

	// Play the kubelet: the status subresource is the only way to change it.
	got.Status.Phase = corev1.PodRunning
	got.Status.PodIP = "10.1.2.3"
	got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := pods.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update pod status: %v", err)
	}

	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=smoke"})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Status.Phase != corev1.PodRunning || list.Items[0].Status.PodIP != "10.1.2.3" {
		t.Fatalf("list pods: got %+v, want one Running pod with IP 10.1.2.3", list.Items)
	}

	for running := false; !running; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed before the pod was seen Running")
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error: %v", ev.Object)
			}
			pod, _ := ev.Object.(*corev1.Pod)
			running = pod != nil && ev.Type == watch.Modified && pod.Status.Phase == corev1.PodRunning
		case <-ctx.Done():
			t.Fatal("timed out watching for the pod to be Running")
		}
	}

	// A service-account token from the TokenRequest API authenticates (which
	// exercises the generated signing key) but, under RBAC, may not list pods.
	if _, err := cs.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "robot"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service account: %v", err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns.Name).CreateToken(ctx, "robot", &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	robot, err := kubernetes.NewForConfig(c.TokenConfig(tr.Status.Token))
	if err != nil {
		t.Fatal(err)
	}
	review, err := robot.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("self subject review as robot: %v", err)
	}
	if want := "system:serviceaccount:" + ns.Name + ":robot"; review.Status.UserInfo.Username != want {
		t.Errorf("robot is %q, want %q", review.Status.UserInfo.Username, want)
	}
	if _, err := robot.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("robot listing pods: err = %v, want forbidden", err)
	}
}

// testKubeconfig checks that the written kubeconfig loads and reaches the
// cluster as admin.
func testKubeconfig(t *testing.T, c *Cluster) {
	path := c.Kubeconfig(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 { // it holds the admin token
		t.Errorf("kubeconfig mode %v, want 0600", fi.Mode().Perm())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version via kubeconfig: %v", err)
	}
	t.Logf("server version %s", v.GitVersion)
}
