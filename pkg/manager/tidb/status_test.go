package tidb

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

var (
	before = metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	now    = metav1.NewTime(before.Add(time.Hour))
)

// podLister returns a lister holding a TiDB pod per ordinal, scheduled on
// the given node ("" for an unscheduled pod).
func podLister(t *testing.T, nodes map[int32]string) corelisters.PodLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for ordinal, node := range nodes {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: names.Pod("basic", names.TiDB, ordinal), Namespace: "ns"},
			Spec: corev1.PodSpec{NodeName: node}}
		if err := indexer.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewPodLister(indexer)
}

func observedCluster() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec:       v1alpha1.TidbClusterSpec{TiKV: &v1alpha1.TiKVSpec{Replicas: 1}, TiDB: &v1alpha1.TiDBSpec{Replicas: 3}},
	}
}

func stsWith(replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)}}
}

func member(ordinal int32, health bool, node string, transition metav1.Time) v1alpha1.TiDBMember {
	return v1alpha1.TiDBMember{Name: names.Pod("basic", names.TiDB, ordinal), Health: health, NodeName: node, LastTransitionTime: transition}
}

func TestObserveMembers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		prev      map[string]v1alpha1.TiDBMember
		pods      map[int32]string
		healthy   map[int32]bool
		checkErr  error
		tls       bool
		sts       *appsv1.StatefulSet
		want      map[string]v1alpha1.TiDBMember
		wantAsked []int32
		wantErr   bool
	}{{
		name:    "every server healthy, nodes from the pods",
		pods:    map[int32]string{0: "n0", 1: "n1", 2: "n2"},
		healthy: map[int32]bool{0: true, 1: true, 2: true},
		sts:     stsWith(3),
		want: map[string]v1alpha1.TiDBMember{
			"basic-tidb-0": member(0, true, "n0", now), "basic-tidb-1": member(1, true, "n1", now), "basic-tidb-2": member(2, true, "n2", now),
		},
		wantAsked: []int32{0, 1, 2},
	}, {
		name:      "with TLS the status ports are asked over https in the cluster domain",
		pods:      map[int32]string{0: "n0"},
		healthy:   map[int32]bool{0: true},
		tls:       true,
		sts:       stsWith(1),
		want:      map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", now)},
		wantAsked: []int32{0},
	}, {
		name:      "a missing pod is unhealthy and not asked; an unscheduled one keeps its old node",
		prev:      map[string]v1alpha1.TiDBMember{"basic-tidb-1": member(1, true, "old", before)},
		pods:      map[int32]string{0: "n0", 1: ""},
		healthy:   map[int32]bool{0: true, 1: false},
		sts:       stsWith(3),
		want:      map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", now), "basic-tidb-1": member(1, false, "old", now), "basic-tidb-2": member(2, false, "", now)},
		wantAsked: []int32{0, 1},
	}, {
		name: "lastTransitionTime is kept while health holds and moves when it changes",
		prev: map[string]v1alpha1.TiDBMember{
			"basic-tidb-0": member(0, true, "n0", before), "basic-tidb-1": member(1, true, "n1", before),
		},
		pods:      map[int32]string{0: "n0", 1: "n1"},
		healthy:   map[int32]bool{0: true, 1: false},
		sts:       stsWith(2),
		want:      map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", before), "basic-tidb-1": member(1, false, "n1", now)},
		wantAsked: []int32{0, 1},
	}, {
		name:      "members beyond the StatefulSet's replicas are dropped",
		prev:      map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", before), "basic-tidb-1": member(1, true, "n1", before)},
		pods:      map[int32]string{0: "n0", 1: "n1"},
		healthy:   map[int32]bool{0: true, 1: true},
		sts:       stsWith(1),
		want:      map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", before)},
		wantAsked: []int32{0},
	}, {
		name:      "a check that cannot be made keeps the old members",
		prev:      map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", before)},
		pods:      map[int32]string{0: "n0"},
		checkErr:  errors.New("no TLS client certificate"),
		sts:       stsWith(1),
		want:      map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", before)},
		wantAsked: []int32{0},
		wantErr:   true,
	}, {
		name: "no StatefulSet: no members, nobody asked",
		prev: map[string]v1alpha1.TiDBMember{"basic-tidb-0": member(0, true, "n0", before)},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hc := tidbapi.NewFakeClient()
			for ordinal := range c.pods {
				pod := names.Pod("basic", names.TiDB, ordinal)
				hc.SetHealth("ns", pod, c.healthy[ordinal])
				hc.SetError("ns", pod, c.checkErr)
			}
			tc := observedCluster()
			tc.Status.TiDB.Members = c.prev
			if c.tls {
				tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
				tc.Spec.ClusterDomain = "cluster.local"
			}
			comp := NewWithClient(&component.Env{Pods: podLister(t, c.pods), Clock: clocktesting.NewFakePassiveClock(now.Time)}, hc)
			err := comp.Observe(context.Background(), tc, c.sts)
			if (err != nil) != c.wantErr {
				t.Fatalf("Observe error = %v, want error: %v", err, c.wantErr)
			}
			if diff := cmp.Diff(c.want, tc.Status.TiDB.Members); diff != "" {
				t.Errorf("status.tidb.members (-want +got):\n%s", diff)
			}
			asked := map[string]bool{}
			for _, call := range hc.Calls() {
				asked[call.PodName] = true
				wantOpts := tidbapi.Options{}
				if c.tls {
					wantOpts = tidbapi.Options{TLSEnabled: true, ClusterDomain: "cluster.local"}
				}
				if call.Method != "GetHealth" || call.Namespace != "ns" || call.TCName != "basic" || call.Options != wantOpts {
					t.Errorf("unexpected call %+v", call)
				}
			}
			want := map[string]bool{}
			for _, o := range c.wantAsked {
				want[names.Pod("basic", names.TiDB, o)] = true
			}
			if diff := cmp.Diff(want, asked); diff != "" {
				t.Errorf("servers asked (-want +got):\n%s", diff)
			}
		})
	}
}

// barrierHealth holds the first tidbapi.DefaultParallelism checks until
// that many are in flight together, failing the test if more ever are: it
// proves Observe checks the servers concurrently, and boundedly.
type barrierHealth struct {
	t        *testing.T
	mu       sync.Mutex
	inFlight int
	arrived  int
	full     chan struct{}
}

var _ tidbapi.Client = (*barrierHealth)(nil)

func (b *barrierHealth) GetInfo(context.Context, string, string, string, tidbapi.Options) (*tidbapi.Info, error) {
	return nil, errors.New("not used")
}

func (b *barrierHealth) GetHealth(ctx context.Context, _, _, _ string, _ tidbapi.Options) (bool, error) {
	b.mu.Lock()
	b.inFlight++
	b.arrived++
	if b.inFlight > tidbapi.DefaultParallelism {
		b.t.Errorf("%d checks in flight, more than %d", b.inFlight, tidbapi.DefaultParallelism)
	}
	if b.arrived == tidbapi.DefaultParallelism {
		close(b.full)
	}
	first := b.arrived <= tidbapi.DefaultParallelism
	b.mu.Unlock()
	if first {
		select {
		case <-b.full:
		case <-ctx.Done():
			b.t.Errorf("checks did not run concurrently: %v", ctx.Err())
		}
	}
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
	return true, nil
}

func TestObserveMembersBoundsConcurrency(t *testing.T) {
	t.Parallel()
	const replicas = 3*tidbapi.DefaultParallelism + 1
	nodes := map[int32]string{}
	for i := range int32(replicas) {
		nodes[i] = "n"
	}
	hc := &barrierHealth{t: t, full: make(chan struct{})}
	tc := observedCluster()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := NewWithClient(&component.Env{Pods: podLister(t, nodes), Clock: clocktesting.NewFakePassiveClock(now.Time)}, hc).Observe(ctx, tc, stsWith(replicas)); err != nil {
		t.Fatal(err)
	}
	if got := HealthyMembers(tc); got != replicas {
		t.Errorf("HealthyMembers = %d, want %d", got, replicas)
	}
}
