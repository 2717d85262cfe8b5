// Package kube is the `kubernetes` machine provider (core.RemoteMachines): a Pod per
// workspace running the `wshub runtime` image, its token in a Secret, its checkout on
// a PersistentVolumeClaim (kept across pauses) or an emptyDir. It speaks to the
// cluster with client-go, core/v1 alone (client.go), and watches its Pods with an
// informer, so a Pod the cluster cannot run (unschedulable, image not pulled, killed
// for memory) fails its workspace with a statusCode that says why.
package kube

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wshub/wshub/core"
)

// ProviderID is the provider's id in the catalog and on workspaces.
const ProviderID = "kubernetes"

// Labels on everything the provider makes.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelWorkspace = "wshub.dev/workspace"
	managedBy      = "wshub"
)

// runtimeDir is where the machine's disk is mounted in the Pod.
const runtimeDir = "/workspace"

// Config describes the Pods the provider makes.
type Config struct {
	Namespace      string
	Image          string
	ServiceAccount string
	// HubURL is the hub's URL as Pods reach it (a Service in front of the hub).
	HubURL string
	// NodeSelector places the Pods.
	NodeSelector map[string]string
	// StorageClass, when set, gives each workspace a PersistentVolumeClaim of
	// VolumeSize kept across pauses; otherwise the checkout lives in an emptyDir and a
	// resumed Pod checks the branch out again from the hub.
	StorageClass string
	VolumeSize   string
	// Size is the one machine size offered: requests and limits of the runtime's
	// container.
	Size core.ProviderSize
	// Env is passed on to the runtime (its own settings and the agents').
	Env []corev1.EnvVar
	// AgentSecret names a Secret whose keys become the runtime's environment: the
	// agents' credentials (ANTHROPIC_API_KEY, ...), kept out of the Pod's spec.
	AgentSecret string
	// ImagePullPolicy of the runtime's container ("" lets the cluster decide).
	ImagePullPolicy corev1.PullPolicy
	// ImageAllow are the images a project's environment may name (path.Match
	// patterns: * within a segment, so "node:*" or "ghcr.io/acme/*"); none allowed
	// when empty.
	ImageAllow []string
	Log        *slog.Logger
}

// Machines is the kubernetes provider.
type Machines struct {
	client *coreClient
	cfg    Config
}

var _ core.RemoteMachines = (*Machines)(nil)

// RESTConfig is the cluster's configuration: the kubeconfig file when one is named
// (WSHUB_KUBECONFIG), otherwise the Pod's in-cluster service account.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return rest.InClusterConfig()
}

// New builds the provider on a cluster.
func New(rc *rest.Config, cfg Config) (*Machines, error) {
	if cfg.Namespace == "" || cfg.Image == "" || cfg.HubURL == "" {
		return nil, errors.New("kubernetes provider: namespace, image and the hub's URL are required")
	}
	client, err := newCoreClient(rc)
	if err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Machines{client: client, cfg: cfg}, nil
}

// Provider describes the provider for the catalog.
func (m *Machines) Provider() core.Provider {
	return core.Provider{ID: ProviderID, DisplayName: "Kubernetes (" + m.cfg.Namespace + ")", BillingSource: "service",
		Sizes: []core.ProviderSize{m.cfg.Size}}
}

// names: workspace ids mix cases, Kubernetes names are lower case; the id's bytes in
// hex keep them apart and reversible.
func podName(id string) string    { return "wshub-" + hex.EncodeToString([]byte(id)) }
func secretName(id string) string { return podName(id) + "-token" }
func claimName(id string) string  { return podName(id) + "-disk" }

func labels(id string) map[string]string {
	return map[string]string{LabelManagedBy: managedBy, LabelWorkspace: id}
}

// Start (re)creates the workspace's Pod with a new token: the old Pod and Secret go,
// the disk stays.
func (m *Machines) Start(ctx context.Context, ws *core.Workspace, token, image string) error {
	if image != "" && !m.allows(image) {
		return &core.SetupError{StatusCode: core.FailureStatus(core.FailureSetup, core.ReasonImageRefused),
			Detail: fmt.Sprintf("the image %s that the project's environment names is not one this hub's operator allows "+
				"(WSHUB_KUBE_IMAGE_ALLOW)", image)}
	}
	if err := m.Stop(ctx, ws); err != nil {
		return err
	}
	if m.cfg.StorageClass != "" {
		if err := m.ensureClaim(ctx, ws.ID); err != nil {
			return err
		}
	}
	// A stopped Pod may still be terminating: each start's Pod has a name of its own.
	pod, err := m.client.pods(m.cfg.Namespace).Create(ctx, m.pod(ws.ID, image), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create pod: %w", err)
	}
	// The Secret belongs to the Pod: a cluster's garbage collector removes it with the
	// Pod; Stop deletes it too, for clusters (and tests) without one.
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(ws.ID), Namespace: m.cfg.Namespace, Labels: labels(ws.ID),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		StringData: map[string]string{"token": token},
	}
	if _, err := m.client.secrets(m.cfg.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create secret: %w", err)
	}
	return nil
}

// AppliesImages is true: a workspace's Pod runs in the image its environment names,
// when the operator allows it.
func (m *Machines) AppliesImages() bool { return true }

// allows reports whether an image matches one of the operator's patterns.
func (m *Machines) allows(image string) bool {
	for _, p := range m.cfg.ImageAllow {
		if ok, err := path.Match(strings.TrimSpace(p), image); err == nil && ok {
			return true
		}
	}
	return false
}

// runtimeBinDir is where, in a Pod of a project's image, the init container copies
// the wshub binary for the runtime's container to run: any image works unrebuilt.
const runtimeBinDir = "/opt/wshub-runtime"

// tokenDir is where the runtime's token Secret is mounted; tokenMode lets only the
// runtime's user read it.
const tokenDir = "/var/run/wshub-runtime"

var tokenMode int32 = 0o400

// pod is the workspace's Pod: the runtime, non-root, its token from the Secret.
func (m *Machines) pod(id, image string) *corev1.Pod {
	cpu := resource.MustParse(strconv.Itoa(max(m.cfg.Size.VCPUCount, 1)))
	mem := resource.MustParse(strconv.FormatInt(max(m.cfg.Size.MemoryMiB, 256), 10) + "Mi")
	env := append([]corev1.EnvVar{
		{Name: "WSHUB_RUNTIME_URL", Value: m.cfg.HubURL},
		{Name: "WSHUB_RUNTIME_DIR", Value: runtimeDir},
		// The token is a file of the Secret's volume, not a variable: the container's
		// first process keeps its initial environment readable in /proc/1/environ, and
		// the agents' sandbox shows none of tokenDir.
		{Name: "WSHUB_RUNTIME_TOKEN_FILE", Value: tokenDir + "/token"},
	}, m.cfg.Env...)
	disk := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if m.cfg.StorageClass != "" {
		disk = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(id)}}
	}
	nonRoot, uid, no := true, int64(10001), false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: podName(id) + "-", Namespace: m.cfg.Namespace, Labels: labels(id)},
		Spec: corev1.PodSpec{
			ServiceAccountName:           m.cfg.ServiceAccount,
			AutomountServiceAccountToken: &no, // the runtime needs no cluster access
			NodeSelector:                 m.cfg.NodeSelector,
			RestartPolicy:                corev1.RestartPolicyAlways,
			SecurityContext:              &corev1.PodSecurityContext{RunAsNonRoot: &nonRoot, RunAsUser: &uid, FSGroup: &uid},
			Volumes: []corev1.Volume{{Name: "disk", VolumeSource: disk},
				{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: secretName(id), DefaultMode: &tokenMode}}}},
			Containers: []corev1.Container{{
				Name: "runtime", Image: m.cfg.Image, ImagePullPolicy: m.cfg.ImagePullPolicy,
				Command: []string{"wshub", "runtime"}, Env: env, EnvFrom: m.envFrom(), WorkingDir: runtimeDir,
				VolumeMounts: []corev1.VolumeMount{{Name: "disk", MountPath: runtimeDir},
					{Name: "token", MountPath: tokenDir, ReadOnly: true}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
				},
			}},
		},
	}
	if image != "" {
		m.inImage(pod, image)
	}
	return pod
}

// inImage makes the Pod run its runtime in a project's image: an init container of
// the hub's image copies the wshub binary (static) into a volume the runtime's
// container, of the project's image, runs it from.
func (m *Machines) inImage(pod *corev1.Pod, image string) {
	spec := &pod.Spec
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "wshub-runtime",
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	main := &spec.Containers[0]
	spec.InitContainers = []corev1.Container{{
		Name: "install-runtime", Image: m.cfg.Image, ImagePullPolicy: m.cfg.ImagePullPolicy,
		Command:      []string{"wshub", "install-runtime", runtimeBinDir},
		VolumeMounts: []corev1.VolumeMount{{Name: "wshub-runtime", MountPath: runtimeBinDir}},
		Resources:    main.Resources,
	}}
	main.Image = image
	main.Command = []string{runtimeBinDir + "/wshub", "runtime"}
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: "wshub-runtime", MountPath: runtimeBinDir, ReadOnly: true})
}

func (m *Machines) envFrom() []corev1.EnvFromSource {
	if m.cfg.AgentSecret == "" {
		return nil
	}
	return []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: m.cfg.AgentSecret}}}}
}

func (m *Machines) ensureClaim(ctx context.Context, id string) error {
	size, err := resource.ParseQuantity(m.cfg.VolumeSize)
	if err != nil {
		return fmt.Errorf("volume size %q: %w", m.cfg.VolumeSize, err)
	}
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claimName(id), Namespace: m.cfg.Namespace, Labels: labels(id)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &m.cfg.StorageClass,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	_, err = m.client.persistentVolumeClaims(m.cfg.Namespace).Create(ctx, claim, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Stop deletes the workspace's Pods and the Secret; the disk stays.
func (m *Machines) Stop(ctx context.Context, ws *core.Workspace) error {
	sel := metav1.ListOptions{LabelSelector: LabelWorkspace + "=" + ws.ID}
	if err := m.client.pods(m.cfg.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		return fmt.Errorf("delete pods: %w", err)
	}
	if err := ignoreMissing(m.client.secrets(m.cfg.Namespace).Delete(ctx, secretName(ws.ID), metav1.DeleteOptions{})); err != nil {
		return fmt.Errorf("delete secret: %w", err)
	}
	return nil
}

// Delete removes the Pod, its Secret and the disk.
func (m *Machines) Delete(ctx context.Context, ws *core.Workspace) error {
	if err := m.Stop(ctx, ws); err != nil {
		return err
	}
	return ignoreMissing(m.client.persistentVolumeClaims(m.cfg.Namespace).Delete(ctx, claimName(ws.ID), metav1.DeleteOptions{}))
}

func ignoreMissing(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
