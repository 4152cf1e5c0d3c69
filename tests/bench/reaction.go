//go:build bench

package main

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// ReplicaWatcher reports, from StatefulSet informer events, when a
// StatefulSet's spec.replicas first reaches an awaited value.
type ReplicaWatcher struct {
	mu      sync.Mutex
	waiters map[string]*replicaWait // by namespace/name
}

type replicaWait struct {
	want int32
	at   time.Time
	done chan struct{}
}

// NewReplicaWatcher registers on a StatefulSet informer.
func NewReplicaWatcher(inf cache.SharedIndexInformer) (*ReplicaWatcher, error) {
	w := &ReplicaWatcher{waiters: map[string]*replicaWait{}}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.observe,
		UpdateFunc: func(_, obj any) { w.observe(obj) },
	})
	return w, err
}

func (w *ReplicaWatcher) observe(obj any) {
	s, ok := obj.(*appsv1.StatefulSet)
	if !ok || s.Spec.Replicas == nil {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	wt, ok := w.waiters[s.Namespace+"/"+s.Name]
	if ok && wt.at.IsZero() && *s.Spec.Replicas >= wt.want {
		wt.at = now
		close(wt.done)
	}
}

// expect arms a wait for key reaching want replicas.
func (w *ReplicaWatcher) expect(key string, want int32) *replicaWait {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := &replicaWait{want: want, done: make(chan struct{})}
	w.waiters[key] = wt
	return wt
}

// measureReaction scales TiKV out by one on k clusters picked at random
// (seeded, so a rerun picks the same ones), one at a time while all others
// stay idle, and returns for each the time from the patch until the
// StatefulSet's spec.replicas changed.
func measureReaction(ctx context.Context, pc versioned.Interface, w *ReplicaWatcher, namespaces []string,
	name string, k int) ([]time.Duration, error) {
	rng := mrand.New(mrand.NewPCG(42, uint64(len(namespaces))))
	picked := rng.Perm(len(namespaces))[:min(k, len(namespaces))]
	var out []time.Duration
	for _, i := range picked {
		ns := namespaces[i]
		tc, err := pc.PingcapV1alpha1().TidbClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return out, err
		}
		want := tc.Spec.TiKV.Replicas + 1
		wt := w.expect(ns+"/"+name+"-tikv", want)
		patch := fmt.Appendf(nil, `{"spec":{"tikv":{"replicas":%d}}}`, want)
		start := time.Now()
		if _, err := pc.PingcapV1alpha1().TidbClusters(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return out, fmt.Errorf("patch %s/%s: %w", ns, name, err)
		}
		select {
		case <-wt.done:
			out = append(out, wt.at.Sub(start))
		case <-time.After(2 * time.Minute):
			return out, fmt.Errorf("StatefulSet %s/%s-tikv did not reach %d replicas within 2m", ns, name, want)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}
