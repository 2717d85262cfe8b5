package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/wshub/wshub/core"
)

// FailedFunc is told that a workspace's machine cannot run (core.Sweeps.MachineFailed).
type FailedFunc func(ctx context.Context, workspaceID, statusCode, detail string) (bool, error)

// Watch follows the provider's Pods with an informer until ctx ends. A Pod the
// cluster cannot run fails its workspace (once: the call is a no-op for a workspace no
// longer starting or running) and is stopped. Every replica watches; the first report
// wins.
func (m *Machines) Watch(ctx context.Context, unschedulableAfter time.Duration, failed FailedFunc) {
	// The Pod informer client-go's informer factory makes (informers/core/v1's
	// NewFilteredPodInformer), on the provider's core/v1 client: the factory's package
	// would link in an informer and a client for every API group.
	pods := m.client.pods(m.cfg.Namespace)
	managed := func(o *metav1.ListOptions) { o.LabelSelector = LabelManagedBy + "=" + managedBy }
	inf := cache.NewSharedIndexInformerWithOptions(
		cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				managed(&o)
				return pods.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				managed(&o)
				return pods.Watch(ctx, o)
			},
		}, pods),
		&corev1.Pod{},
		cache.SharedIndexInformerOptions{
			ResyncPeriod: 10 * time.Minute,
			Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		})
	check := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.DeletionTimestamp != nil {
			return
		}
		code, detail, bad := podFailure(pod, time.Now(), unschedulableAfter)
		if !bad {
			return
		}
		id := pod.Labels[LabelWorkspace]
		did, err := failed(ctx, id, code, detail)
		if err != nil {
			m.cfg.Log.Warn("report a failed machine", "workspace", id, "pod", pod.Name, "err", err)
			return
		}
		if did {
			if err := m.Stop(ctx, &core.Workspace{ID: id}); err != nil {
				m.cfg.Log.Warn("stop a failed machine", "workspace", id, "err", err)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    check,
		UpdateFunc: func(_, obj any) { check(obj) },
	})
	// Watch returns once the informer has stopped, as the factory's Shutdown waited for it.
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	<-ctx.Done()
	wg.Wait()
}

// podFailure says whether a Pod shows that the cluster cannot run it, and why.
// Unschedulable counts once it has lasted unschedulableAfter (a cluster autoscaler
// may be adding a node).
func podFailure(pod *corev1.Pod, now time.Time, unschedulableAfter time.Duration) (code, detail string, failed bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
			now.Sub(c.LastTransitionTime.Time) >= unschedulableAfter {
			return core.FailureStatus(core.FailureProvision, core.ReasonUnschedulable),
				"no node of the cluster can run the workspace's machine: " + c.Message, true
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ImagePullBackOff", "ErrImagePull", "InvalidImageName":
				return core.FailureStatus(core.FailureProvision, core.ReasonImagePull),
					fmt.Sprintf("the runtime's image %s cannot be pulled: %s", cs.Image, w.Reason), true
			}
		}
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t != nil && t.Reason == "OOMKilled" {
				return core.FailureStatus(core.FailureMachineLost, core.ReasonOOMKilled),
					"the workspace's machine ran out of memory (OOMKilled); a larger size may help", true
			}
		}
	}
	return "", "", false
}
