//go:build bench

package main

import (
	"context"
	"embed"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

//go:embed testdata/*.yaml
var shapes embed.FS

// loadShape returns the TidbCluster of BENCH_SHAPE name and its YAML, the
// big shape scaled by the BENCH_BIG_* variables (bigshape.go).
func loadShape(name string) (*v1alpha1.TidbCluster, []byte, error) {
	raw, err := shapes.ReadFile("testdata/" + name + ".yaml")
	if err != nil {
		return nil, nil, fmt.Errorf("unknown BENCH_SHAPE %q (basic, ha, tiflash, ticdc or big): %w", name, err)
	}
	tc := &v1alpha1.TidbCluster{}
	if err := yaml.UnmarshalStrict(raw, tc); err != nil {
		return nil, nil, fmt.Errorf("decode shape %s: %w", name, err)
	}
	raw, err = applyBigEnv(name, tc, raw)
	return tc, raw, err
}

// podsPerCluster is how many pods one cluster of the shape runs (with discovery).
func podsPerCluster(tc *v1alpha1.TidbCluster) int {
	n := tc.Spec.PD.Replicas + tc.Spec.TiKV.Replicas + tc.Spec.TiDB.Replicas
	if tc.Spec.TiFlash != nil {
		n += tc.Spec.TiFlash.Replicas
	}
	if tc.Spec.TiCDC != nil {
		n += tc.Spec.TiCDC.Replicas
	}
	return int(n) + 1
}

// storesPerCluster is how many TiKV and TiFlash stores one cluster of the
// shape runs.
func storesPerCluster(tc *v1alpha1.TidbCluster) int {
	var n int32
	if tc.Spec.TiKV != nil {
		n = tc.Spec.TiKV.Replicas
	}
	if tc.Spec.TiFlash != nil {
		n += tc.Spec.TiFlash.Replicas
	}
	return int(n)
}

// namespaceName is the namespace of cluster i of a phase ("bench" or "raw").
func namespaceName(prefix string, i int) string { return fmt.Sprintf("%s%04d", prefix, i) }

// forEach runs f(i) for i in [0, n) on workers goroutines and returns the
// first error.
func forEach(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					select {
					case errs <- err:
					default:
					}
					cancel()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// createNamespaces creates the namespaces and waits until each has its
// default ServiceAccount: pods are refused before it exists, which would
// charge the control plane's namespace setup to whoever creates pods first.
func createNamespaces(ctx context.Context, kube kubernetes.Interface, names []string) error {
	err := forEach(ctx, len(names), 32, func(ctx context.Context, i int) error {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i], Labels: map[string]string{"kubetidb.io/bench": "true"}}}
		_, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create namespaces: %w", err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	return poll(ctx, 500*time.Millisecond, 5*time.Minute, "default ServiceAccounts", func(ctx context.Context) (bool, error) {
		l, err := kube.CoreV1().ServiceAccounts("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=default"})
		if err != nil {
			return false, nil
		}
		n := 0
		for _, sa := range l.Items {
			if want[sa.Namespace] {
				n++
			}
		}
		return n == len(names), nil
	})
}

// ReadyTracker records when each TidbCluster was first seen Ready=True at
// its current generation, from an informer's events.
type ReadyTracker struct {
	mu    sync.Mutex
	ready map[string]time.Time
}

// NewReadyTracker registers on inf.
func NewReadyTracker(inf cache.SharedIndexInformer) (*ReadyTracker, error) {
	t := &ReadyTracker{ready: map[string]time.Time{}}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    t.observe,
		UpdateFunc: func(_, obj any) { t.observe(obj) },
	})
	return t, err
}

func (t *ReadyTracker) observe(obj any) {
	tc, ok := obj.(*v1alpha1.TidbCluster)
	if !ok || !isReady(tc) {
		return
	}
	now := time.Now()
	key := tc.Namespace + "/" + tc.Name
	t.mu.Lock()
	if _, seen := t.ready[key]; !seen {
		t.ready[key] = now
	}
	t.mu.Unlock()
}

func isReady(tc *v1alpha1.TidbCluster) bool {
	c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
	return c != nil && c.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation
}

// Ready returns the time key was first Ready.
func (t *ReadyTracker) Ready(key string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.ready[key]
	return at, ok
}

// Count returns how many clusters were Ready at least once.
func (t *ReadyTracker) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ready)
}

// createClusters creates one copy of shape in each namespace at full
// concurrency and returns when each create was sent, by "namespace/name".
func createClusters(ctx context.Context, pc versioned.Interface, shape *v1alpha1.TidbCluster, namespaces []string) (map[string]time.Time, error) {
	var mu sync.Mutex
	sent := map[string]time.Time{}
	err := forEach(ctx, len(namespaces), 64, func(ctx context.Context, i int) error {
		tc := shape.DeepCopy()
		tc.Namespace = namespaces[i]
		at := time.Now()
		if _, err := pc.PingcapV1alpha1().TidbClusters(tc.Namespace).Create(ctx, tc, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create TidbCluster %s/%s: %w", tc.Namespace, tc.Name, err)
		}
		mu.Lock()
		sent[tc.Namespace+"/"+tc.Name] = at
		mu.Unlock()
		return nil
	})
	return sent, err
}
