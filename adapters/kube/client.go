package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// The provider's client speaks core/v1 only (Pods, Secrets, PersistentVolumeClaims),
// with a scheme of its own holding that group alone. client-go's clientset
// (k8s.io/client-go/kubernetes), and even its typed core/v1 client, register every API
// group of Kubernetes in k8s.io/client-go/kubernetes/scheme when the hub starts: their
// code and tables were a fifth of an idle hub's resident memory, for a provider most
// hubs do not run. The requests below are those of client-go's typed core/v1 client (its
// gentype.Client: protobuf preferred, the same defaults), on this scheme. gentype itself
// is not used: it links the fake clientset's machinery (k8s.io/client-go/testing,
// server-side apply, OpenAPI models) into the binary.
var (
	coreScheme         = runtime.NewScheme()
	coreCodecs         = serializer.NewCodecFactory(coreScheme)
	coreParameterCodec = runtime.NewParameterCodec(coreScheme)
)

func init() {
	// As k8s.io/client-go/kubernetes/scheme does, for core/v1 alone.
	metav1.AddToGroupVersion(coreScheme, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(corev1.AddToScheme(coreScheme))
}

// coreClient is the part of the core/v1 API the provider uses.
type coreClient struct {
	rest rest.Interface
}

// newCoreClient configures a core/v1 client as client-go's typed core/v1 client does
// (kubernetes.NewForConfig's: /api, protobuf preferred, the default user agent, one
// rate limiter from the config's QPS and burst).
func newCoreClient(rc *rest.Config) (*coreClient, error) {
	config := *rc
	gv := corev1.SchemeGroupVersion
	config.GroupVersion = &gv
	config.APIPath = "/api"
	config.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(coreScheme, coreCodecs).WithoutConversion()
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientFor(&config)
	if err != nil {
		return nil, err
	}
	return &coreClient{rest: client}, nil
}

func (c *coreClient) pods(namespace string) *resourceClient[*corev1.Pod, *corev1.PodList] {
	return &resourceClient[*corev1.Pod, *corev1.PodList]{c.rest, "pods", namespace,
		func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} }}
}

func (c *coreClient) secrets(namespace string) *resourceClient[*corev1.Secret, *corev1.SecretList] {
	return &resourceClient[*corev1.Secret, *corev1.SecretList]{c.rest, "secrets", namespace,
		func() *corev1.Secret { return &corev1.Secret{} }, func() *corev1.SecretList { return &corev1.SecretList{} }}
}

func (c *coreClient) persistentVolumeClaims(namespace string) *resourceClient[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
	return &resourceClient[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]{c.rest, "persistentvolumeclaims", namespace,
		func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} },
		func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} }}
}

// resourceClient is one namespaced resource of core/v1: T its objects, L their lists.
// Each method is gentype.Client's (client-go v0.37) for a type that prefers protobuf.
type resourceClient[T, L runtime.Object] struct {
	rest      rest.Interface
	resource  string
	namespace string
	newObject func() T
	newList   func() L
}

func (c *resourceClient[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	result := c.newObject()
	err := c.rest.Post().
		UseProtobufAsDefault().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, coreParameterCodec).
		Body(obj).
		Do(ctx).
		Into(result)
	return result, err
}

func (c *resourceClient[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.rest.Delete().
		UseProtobufAsDefault().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		Name(name).
		Body(&opts).
		Do(ctx).
		Error()
}

func (c *resourceClient[T, L]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	return c.rest.Delete().
		UseProtobufAsDefault().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&listOpts, coreParameterCodec).
		Timeout(timeout(listOpts)).
		Body(&opts).
		Do(ctx).
		Error()
}

func (c *resourceClient[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	list := c.newList()
	err := c.rest.Get().
		UseProtobufAsDefault().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, coreParameterCodec).
		Timeout(timeout(opts)).
		Do(ctx).
		Into(list)
	return list, err
}

func (c *resourceClient[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rest.Get().
		UseProtobufAsDefault().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, coreParameterCodec).
		Timeout(timeout(opts)).
		Watch(ctx)
}

// timeout is a list's or watch's TimeoutSeconds as the request's timeout (0: none).
func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}
