package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
)

// The provider's client speaks core/v1 only (Pods, Secrets, PersistentVolumeClaims),
// with a scheme of its own holding that group alone. client-go's clientset
// (k8s.io/client-go/kubernetes), and even its typed core/v1 client, register every API
// group of Kubernetes in k8s.io/client-go/kubernetes/scheme when the hub starts: their
// code and tables were most of the idle hub's resident memory, for a provider most hubs
// do not run. The clients below are the ones client-go's typed core/v1 client builds
// (gentype, protobuf preferred, the same defaults), on this scheme.
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

func (c *coreClient) pods(namespace string) *gentype.ClientWithList[*corev1.Pod, *corev1.PodList] {
	return gentype.NewClientWithList("pods", c.rest, coreParameterCodec, namespace,
		func() *corev1.Pod { return &corev1.Pod{} },
		func() *corev1.PodList { return &corev1.PodList{} },
		gentype.PrefersProtobuf[*corev1.Pod]())
}

func (c *coreClient) secrets(namespace string) *gentype.ClientWithList[*corev1.Secret, *corev1.SecretList] {
	return gentype.NewClientWithList("secrets", c.rest, coreParameterCodec, namespace,
		func() *corev1.Secret { return &corev1.Secret{} },
		func() *corev1.SecretList { return &corev1.SecretList{} },
		gentype.PrefersProtobuf[*corev1.Secret]())
}

func (c *coreClient) persistentVolumeClaims(namespace string) *gentype.ClientWithList[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
	return gentype.NewClientWithList("persistentvolumeclaims", c.rest, coreParameterCodec, namespace,
		func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} },
		func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} },
		gentype.PrefersProtobuf[*corev1.PersistentVolumeClaim]())
}
