package kube

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/kubetest"
)

// manifestDir holds the deployment manifests: what kustomization.yaml lists, and the
// *.example.yaml files an operator edits first (the Secrets, the Ingress, the admin Job).
const manifestDir = "../../deploy/kubernetes"

// manifests is every object of manifestDir, in file order.
type manifests struct {
	objs []runtime.Object
}

func readManifests(t *testing.T) manifests {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no manifests in deploy/kubernetes")
	}
	var m manifests
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
			m.objs = append(m.objs, obj)
		}
	}
	return m
}

// all returns the objects of type T.
func all[T runtime.Object](m manifests) []T {
	var out []T
	for _, o := range m.objs {
		if o, ok := o.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

// the returns the one object of type T named name ("" when the manifests have one
// object of that type, or it is named by generateName).
func the[T interface {
	runtime.Object
	GetName() string
	GetNamespace() string
}](t *testing.T, m manifests, name string) T {
	t.Helper()
	var found []T
	for _, o := range all[T](m) {
		if name == "" || o.GetName() == name {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("expected one %T named %q in the manifests, found %d", zero, name, len(found))
	}
	return found[0]
}

// apply creates every object of the manifests on a real API server, which validates
// them as a cluster would: the namespaces first, then the rest as an operator would
// (the examples filled in).
func apply(t *testing.T, cs kubernetes.Interface, m manifests) {
	t.Helper()
	ctx := context.Background()
	objs := slices.Clone(m.objs)
	slices.SortStableFunc(objs, func(a, b runtime.Object) int {
		_, an := a.(*corev1.Namespace)
		_, bn := b.(*corev1.Namespace)
		switch {
		case an && !bn:
			return -1
		case bn && !an:
			return 1
		}
		return 0
	})
	for _, o := range objs {
		var err error
		create := metav1.CreateOptions{}
		switch o := o.(type) {
		case *corev1.Namespace:
			_, err = cs.CoreV1().Namespaces().Create(ctx, o, create)
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, create)
		case *corev1.Secret:
			_, err = cs.CoreV1().Secrets(o.Namespace).Create(ctx, o, create)
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, create)
		case *corev1.Service:
			_, err = cs.CoreV1().Services(o.Namespace).Create(ctx, o, create)
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, create)
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, create)
		case *appsv1.Deployment:
			_, err = cs.AppsV1().Deployments(o.Namespace).Create(ctx, o, create)
		case *policyv1.PodDisruptionBudget:
			_, err = cs.PolicyV1().PodDisruptionBudgets(o.Namespace).Create(ctx, o, create)
		case *networkingv1.Ingress:
			_, err = cs.NetworkingV1().Ingresses(o.Namespace).Create(ctx, o, create)
		case *batchv1.Job:
			_, err = cs.BatchV1().Jobs(o.Namespace).Create(ctx, o, create)
		default:
			t.Fatalf("the test cannot apply a %T", o)
		}
		if err != nil {
			t.Fatalf("apply %T: %v", o, err)
		}
	}
}

// The manifests apply; the hub's Pod (and the admin Job's) meets the Pod Security
// Standard "restricted" its namespace enforces, keeps nothing on a shared disk and is
// covered by a disruption budget; the workspace Pods the provider makes are admitted
// in theirs; and the hub's service account may do what the provider does, in the
// workspaces' namespace, and nothing else: the provider runs here with that account's
// token, configured from the manifests' ConfigMap.
func TestManifestsAndTheHubsPermissions(t *testing.T) {
	m := readManifests(t)
	checkKustomization(t, m)
	checkTheHubsPod(t, m)
	checkTheExamples(t, m)

	cluster := kubetest.Start(t)
	admin, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, admin, m)
	ctx := context.Background()
	checkPodSecurity(t, admin, m)

	cfg := the[*corev1.ConfigMap](t, m, "wshub").Data
	ns := cfg["WSHUB_KUBE_NAMESPACE"]
	hubSA := the[*appsv1.Deployment](t, m, "wshub").Spec.Template.Spec.ServiceAccountName
	tr, err := admin.CoreV1().ServiceAccounts("wshub").CreateToken(ctx, hubSA, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asHub := cluster.TokenConfig(tr.Status.Token)
	mach, err := New(asHub, Config{Namespace: ns, Image: "wshub:test", HubURL: cfg["WSHUB_RUNTIME_HUB_URL"],
		ServiceAccount: cfg["WSHUB_KUBE_SERVICE_ACCOUNT"], AgentSecret: cfg["WSHUB_KUBE_AGENT_SECRET"],
		StorageClass: "standard", VolumeSize: "1Gi", Size: core.ProviderSize{ID: "standard", VCPUCount: 1, MemoryMiB: 512},
		ImageAllow: []string{"node:*"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	failures := map[string]string{}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go mach.Watch(wctx, 0, func(_ context.Context, id, code, _ string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		failures[id] = code
		return true, nil
	})

	// The workspace's Pod is admitted in its namespace, whose Pod Security level
	// (baseline) the API server enforces.
	ws := &core.Workspace{ID: "ws_0123456789ABCDEF"}
	if err := mach.Start(ctx, ws, "wsrt_token", ""); err != nil {
		t.Fatalf("start as the hub's account: %v", err)
	}
	// A Pod in a project's image, its runtime installed by an init container, is
	// admitted too; an image the operator does not allow makes no Pod.
	inImage := &core.Workspace{ID: "ws_0123456789IMAGE"}
	if err := mach.Start(ctx, inImage, "wsrt_token2", "node:22"); err != nil {
		t.Fatalf("start in a project's image: %v", err)
	}
	if l, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelWorkspace + "=" + inImage.ID}); err != nil ||
		len(l.Items) != 1 || len(l.Items[0].Spec.InitContainers) != 1 || l.Items[0].Spec.Containers[0].Image != "node:22" {
		t.Fatalf("expected the Pod in node:22 with its installer, got %v %v", l, err)
	}
	var refused *core.SetupError
	if err := mach.Start(ctx, &core.Workspace{ID: "ws_0123456789NOPE0"}, "wsrt_token3", "python:3.12"); !errors.As(err, &refused) ||
		refused.StatusCode != "setup_failed:image_refused" {
		t.Fatalf("expected an image not allowed refused, got %v", err)
	}
	pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelWorkspace + "=" + ws.ID})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("expected the workspace's Pod, got %v %v", pods, err)
	}
	// The cluster cannot pull the image: the watcher reports it.
	p := pods.Items[0]
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "runtime", Image: "wshub:test",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	if _, err := admin.CoreV1().Pods(ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually.NoError(t, 20*time.Second, "the watcher to report image_pull", func() error {
		mu.Lock()
		code := failures[ws.ID]
		mu.Unlock()
		if code != "provision_failed:image_pull" {
			return fmt.Errorf("got %q", code)
		}
		return nil
	})
	if err := mach.Delete(ctx, ws); err != nil {
		t.Fatalf("delete as the hub's account: %v", err)
	}

	// Nothing outside the workspaces' namespace (its own, with its Secrets, included),
	// and no other kind of object.
	hub, _ := kubernetes.NewForConfig(asHub)
	for _, other := range []string{"kube-system", "wshub"} {
		if _, err := hub.CoreV1().Secrets(other).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("expected the hub forbidden from the secrets of %s, got %v", other, err)
		}
		if _, err := hub.CoreV1().Pods(other).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("expected the hub forbidden from the pods of %s, got %v", other, err)
		}
	}
	if _, err := hub.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("expected the hub forbidden from deployments, got %v", err)
	}

	// The documented command, where kubectl is installed: kustomize renders the
	// directory and the API server takes every object of it. Forced: the objects
	// exist, made by apply above, whose values the server defaulted differently in
	// places (a fieldRef's apiVersion).
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(kubectl, "--kubeconfig", cluster.Kubeconfig(t), "apply", "-k", manifestDir,
			"--server-side", "--force-conflicts", "--dry-run=server").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply -k: %v\n%s", err, out)
		}
		t.Logf("kubectl apply -k %s:\n%s", manifestDir, out)
	} else {
		t.Log("kubectl is not installed: kubectl apply -k not tried")
	}
}

// checkKustomization: kustomization.yaml applies every manifest but the examples.
func checkKustomization(t *testing.T, m manifests) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !strings.HasSuffix(b, ".example.yaml") {
			want = append(want, b)
		}
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, want) {
		t.Fatalf("expected kustomization.yaml to list %v (every manifest but the examples), got %v", want, got)
	}
	if len(all[*corev1.PersistentVolumeClaim](m)) != 0 {
		t.Fatal("expected no PersistentVolumeClaim: the replicas share no disk")
	}
}

// dockerUser is the Dockerfile's USER, uid and gid.
func dockerUser(t *testing.T) (uid, gid int64) {
	t.Helper()
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var user string
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "USER "); ok {
			user = strings.TrimSpace(rest)
		}
	}
	u, g, _ := strings.Cut(user, ":")
	uid, uerr := strconv.ParseInt(u, 10, 64)
	gid, gerr := strconv.ParseInt(g, 10, 64)
	if uerr != nil || gerr != nil || uid == 0 || gid == 0 {
		t.Fatalf("expected the Dockerfile's USER to be a numeric uid:gid other than root, got %q", user)
	}
	return uid, gid
}

// checkRestricted checks the fields of the Pod Security Standard "restricted" on a
// Pod spec, and that it runs as the image's user, with emptyDirs where it writes.
// (checkPodSecurity has the API server judge it too.)
func checkRestricted(t *testing.T, what string, spec corev1.PodSpec) {
	t.Helper()
	uid, gid := dockerUser(t)
	sc := spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot ||
		sc.RunAsUser == nil || *sc.RunAsUser != uid || sc.RunAsGroup == nil || *sc.RunAsGroup != gid ||
		sc.FSGroup == nil || *sc.FSGroup != gid ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("%s: expected runAsNonRoot, runAsUser %d, runAsGroup and fsGroup %d (the Dockerfile's USER) and the RuntimeDefault seccomp profile, got %+v",
			what, uid, gid, sc)
	}
	emptyDirs := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.HostPath != nil {
			t.Fatalf("%s: expected no claim and no host path, got volume %+v", what, v)
		}
		emptyDirs[v.Name] = v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil
	}
	for _, c := range spec.Containers {
		csc := c.SecurityContext
		if csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
			csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
			csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(csc.Capabilities.Add) > 0 ||
			(csc.Privileged != nil && *csc.Privileged) {
			t.Fatalf("%s: expected container %s without privilege escalation, on a read-only root, with every capability dropped, got %+v",
				what, c.Name, csc)
		}
		mounts := map[string]bool{}
		for _, vm := range c.VolumeMounts {
			if !emptyDirs[vm.Name] {
				t.Fatalf("%s: expected %s to be an emptyDir with a sizeLimit", what, vm.MountPath)
			}
			mounts[vm.MountPath] = true
		}
		if !mounts["/tmp"] || !mounts["/var/lib/wshub"] {
			t.Fatalf("%s: expected writable emptyDirs on /tmp and the data directory, got %v", what, mounts)
		}
	}
}

// envFrom is the ConfigMap and Secrets a container reads its environment from.
func envFrom(c corev1.Container) []string {
	var out []string
	for _, e := range c.EnvFrom {
		switch {
		case e.ConfigMapRef != nil:
			out = append(out, "configmap/"+e.ConfigMapRef.Name)
		case e.SecretRef != nil:
			out = append(out, "secret/"+e.SecretRef.Name)
		}
	}
	return out
}

// checkTheHubsPod: the hub's Deployment, its Service and its disruption budget.
func checkTheHubsPod(t *testing.T, m manifests) {
	t.Helper()
	d := the[*appsv1.Deployment](t, m, "wshub")
	spec := d.Spec.Template.Spec
	checkRestricted(t, "the hub", spec)
	if len(spec.Containers) != 1 {
		t.Fatalf("expected one container in the hub's Pod, got %d", len(spec.Containers))
	}
	c := spec.Containers[0]
	cfg := the[*corev1.ConfigMap](t, m, "wshub").Data
	if got := envFrom(c); !slices.Equal(got, []string{"configmap/wshub", "secret/wshub-hub"}) {
		t.Fatalf("expected the hub's environment from the ConfigMap wshub and the Secret wshub-hub, got %v", got)
	}
	for _, v := range spec.Volumes {
		for _, vm := range c.VolumeMounts {
			if vm.Name == v.Name && vm.MountPath == cfg["WSHUB_DATA_DIR"] && v.EmptyDir == nil {
				t.Fatalf("expected the data directory %s on an emptyDir, got %+v", vm.MountPath, v)
			}
		}
	}
	hostID := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WSHUB_HOST_ID" })
	if hostID < 0 || c.Env[hostID].ValueFrom == nil || c.Env[hostID].ValueFrom.FieldRef == nil ||
		c.Env[hostID].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Fatalf("expected WSHUB_HOST_ID from the Pod's name (downward API), got %+v", c.Env)
	}
	if cfg["WSHUB_KUBE_IMAGE"] != c.Image {
		t.Fatalf("expected the runtime's image to be the hub's, %s, got %s", c.Image, cfg["WSHUB_KUBE_IMAGE"])
	}
	if c.StartupProbe == nil || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
		c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Fatalf("expected a startup probe, liveness on /healthz and readiness on /readyz, got %+v %+v %+v",
			c.StartupProbe, c.LivenessProbe, c.ReadinessProbe)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Fatalf("expected CPU and memory requests and a memory limit, got %+v", c.Resources)
	}
	replicas := *d.Spec.Replicas
	ru := d.Spec.Strategy.RollingUpdate
	if replicas < 2 || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Fatalf("expected at least 2 replicas, rolled one new Pod before an old one goes, got %d %+v", replicas, ru)
	}

	pods := klabels.Set(d.Spec.Template.Labels)
	svc := the[*corev1.Service](t, m, "wshub")
	if !klabels.SelectorFromSet(svc.Spec.Selector).Matches(pods) {
		t.Fatalf("expected the Service's selector %v to match the hub's Pods %v", svc.Spec.Selector, pods)
	}
	pdb := the[*policyv1.PodDisruptionBudget](t, m, "")
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || pdb.Namespace != d.Namespace || !sel.Matches(pods) {
		t.Fatalf("expected the disruption budget to select the hub's Pods %v in %s, got %v in %s (%v)", pods, d.Namespace, sel, pdb.Namespace, err)
	}
	switch {
	case pdb.Spec.MaxUnavailable != nil && pdb.Spec.MaxUnavailable.IntValue() == 1:
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.IntValue() >= 1 && pdb.Spec.MinAvailable.IntValue() < int(replicas):
	default:
		t.Fatalf("expected the budget to let one of %d hub Pods go at a time, got %+v", replicas, pdb.Spec)
	}

	// Workspace Pods reach the hub through its Service.
	u, err := url.Parse(cfg["WSHUB_RUNTIME_HUB_URL"])
	if err != nil || u.Hostname() != svc.Name+"."+svc.Namespace+".svc.cluster.local" || u.Port() != strconv.Itoa(int(svc.Spec.Ports[0].Port)) {
		t.Fatalf("expected WSHUB_RUNTIME_HUB_URL to name the Service %s.%s:%d, got %q", svc.Name, svc.Namespace, svc.Spec.Ports[0].Port, cfg["WSHUB_RUNTIME_HUB_URL"])
	}
	// What the provider names is in the workspaces' namespace.
	ns := cfg["WSHUB_KUBE_NAMESPACE"]
	if sa := the[*corev1.ServiceAccount](t, m, cfg["WSHUB_KUBE_SERVICE_ACCOUNT"]); sa.Namespace != ns ||
		sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Fatalf("expected the workspace Pods' account in %s, with no token mounted, got %+v", ns, sa)
	}
	if s := the[*corev1.Secret](t, m, cfg["WSHUB_KUBE_AGENT_SECRET"]); s.Namespace != ns {
		t.Fatalf("expected the agents' Secret in %s, got %s", ns, s.Namespace)
	}
	if r := the[*rbacv1.RoleBinding](t, m, "wshub-machines"); r.Namespace != ns ||
		r.Subjects[0].Name != spec.ServiceAccountName || r.Subjects[0].Namespace != d.Namespace {
		t.Fatalf("expected the hub's account bound in %s, got %+v", ns, r)
	}
}

// checkTheExamples: the Secret's blob store, the admin Job and the Ingress.
func checkTheExamples(t *testing.T, m manifests) {
	t.Helper()
	secret := the[*corev1.Secret](t, m, "wshub-hub").StringData
	for _, k := range []string{"DATABASE_URL", "WSHUB_CONTENT_KEY", "WSHUB_S3_ENDPOINT", "WSHUB_S3_BUCKET", "WSHUB_S3_REGION",
		"WSHUB_S3_ACCESS_KEY_ID", "WSHUB_S3_SECRET_ACCESS_KEY"} {
		if secret[k] == "" {
			t.Errorf("expected %s in the Secret wshub-hub", k)
		}
	}
	if secret["WSHUB_BLOBS"] != "s3" {
		t.Errorf("expected WSHUB_BLOBS=s3 in the Secret wshub-hub (the replicas share no disk), got %q", secret["WSHUB_BLOBS"])
	}

	d := the[*appsv1.Deployment](t, m, "wshub")
	hub := d.Spec.Template.Spec
	job := the[*batchv1.Job](t, m, "")
	spec := job.Spec.Template.Spec
	checkRestricted(t, "the admin Job", spec)
	c := spec.Containers[0]
	if job.Namespace != d.Namespace || spec.ServiceAccountName != hub.ServiceAccountName || c.Image != hub.Containers[0].Image ||
		!slices.Equal(envFrom(c), envFrom(hub.Containers[0])) || c.Args[0] != "admin" {
		t.Fatalf("expected the admin Job to run `wshub admin` with the hub's image, configuration and account, got %+v", job)
	}
	if job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 || spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("expected the admin Job to run its command once, got backoffLimit %v, restartPolicy %s", job.Spec.BackoffLimit, spec.RestartPolicy)
	}
	jobPod := klabels.Set(job.Spec.Template.Labels)
	pdb, _ := metav1.LabelSelectorAsSelector(the[*policyv1.PodDisruptionBudget](t, m, "").Spec.Selector)
	if klabels.SelectorFromSet(the[*corev1.Service](t, m, "wshub").Spec.Selector).Matches(jobPod) || pdb.Matches(jobPod) {
		t.Fatalf("expected the admin Job's Pod %v outside the hub's Service and disruption budget", jobPod)
	}

	ing := the[*networkingv1.Ingress](t, m, "")
	public, err := url.Parse(the[*corev1.ConfigMap](t, m, "wshub").Data["WSHUB_PUBLIC_URL"])
	if err != nil || public.Scheme != "https" {
		t.Fatalf("expected WSHUB_PUBLIC_URL to be https, got %v %v", public, err)
	}
	if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName == "" || !slices.Equal(ing.Spec.TLS[0].Hosts, []string{public.Hostname()}) ||
		len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != public.Hostname() {
		t.Fatalf("expected the Ingress to serve %s, the public URL's host, with TLS, got %+v", public.Hostname(), ing.Spec)
	}
	var paths []string
	for _, p := range ing.Spec.Rules[0].HTTP.Paths {
		if b := p.Backend.Service; b == nil || b.Name != "wshub" || b.Port.Name != "http" {
			t.Fatalf("expected %s routed to the hub's Service, got %+v", p.Path, p.Backend)
		}
		paths = append(paths, p.Path)
	}
	for _, want := range []string{"/v1/api", "/app", "/slack", "/discord"} {
		if !slices.Contains(paths, want) {
			t.Errorf("expected the Ingress to route %s, got %v", want, paths)
		}
	}
	for _, p := range paths {
		if p == "/" || strings.HasPrefix(p, "/internal") {
			t.Errorf("expected the runtime API to stay inside the cluster, but the Ingress routes %s", p)
		}
	}
}

// checkPodSecurity has the API server's PodSecurity admission judge the Pods: the
// hub's and the admin Job's are admitted in the hub's namespace (restricted), a Pod
// with no security context is not (so the check is real), and a privileged Pod is not
// admitted in the workspaces' (baseline).
func checkPodSecurity(t *testing.T, cs kubernetes.Interface, m manifests) {
	t.Helper()
	ctx := context.Background()
	d := the[*appsv1.Deployment](t, m, "wshub")
	job := the[*batchv1.Job](t, m, "")
	workspaces := the[*corev1.ConfigMap](t, m, "wshub").Data["WSHUB_KUBE_NAMESPACE"]
	yes := true
	bare := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
	privileged := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
		SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}}
	cases := []struct {
		name, namespace string
		spec            corev1.PodSpec
		admitted        bool
	}{
		{"the hub's Pod", d.Namespace, d.Spec.Template.Spec, true},
		{"the admin Job's Pod", job.Namespace, job.Spec.Template.Spec, true},
		{"a Pod with no security context, beside the hub", d.Namespace, bare, false},
		{"a privileged Pod, beside the workspaces", workspaces, privileged, false},
	}
	for _, c := range cases {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "podsecurity-", Namespace: c.namespace}, Spec: c.spec}
		_, err := cs.CoreV1().Pods(c.namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case c.admitted && err != nil:
			t.Errorf("%s: expected it admitted in %s, got %v", c.name, c.namespace, err)
		case !c.admitted && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity")):
			t.Errorf("%s: expected it refused by PodSecurity in %s, got %v", c.name, c.namespace, err)
		}
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
