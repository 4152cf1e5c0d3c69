package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	pingcapfake "github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// TestMonitoringListersReadTheirInformers seeds one object of each
// monitoring and initialization kind into the pingcap informer factory's
// indexers and reads it back through the Dependencies lister of that kind,
// so each lister is wired to its own kind's informer.
func TestMonitoringListersReadTheirInformers(t *testing.T) {
	t.Parallel()
	deps := NewFakeDependencies()
	pingcap := deps.InformerFactory.Pingcap().V1alpha1()
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "x"}
	seed := map[string]struct {
		add func() error
		get func() error
	}{
		"TidbInitializer": {
			add: func() error {
				return pingcap.TidbInitializers().Informer().GetIndexer().Add(&v1alpha1.TidbInitializer{ObjectMeta: meta})
			},
			get: func() error { _, err := deps.TiDBInitializerLister.TidbInitializers("ns").Get("x"); return err },
		},
		"TidbMonitor": {
			add: func() error {
				return pingcap.TidbMonitors().Informer().GetIndexer().Add(&v1alpha1.TidbMonitor{ObjectMeta: meta})
			},
			get: func() error { _, err := deps.TiDBMonitorLister.TidbMonitors("ns").Get("x"); return err },
		},
		"TidbDashboard": {
			add: func() error {
				return pingcap.TidbDashboards().Informer().GetIndexer().Add(&v1alpha1.TidbDashboard{ObjectMeta: meta})
			},
			get: func() error { _, err := deps.TiDBDashboardLister.TidbDashboards("ns").Get("x"); return err },
		},
		"TidbNGMonitoring": {
			add: func() error {
				return pingcap.TidbNGMonitorings().Informer().GetIndexer().Add(&v1alpha1.TidbNGMonitoring{ObjectMeta: meta})
			},
			get: func() error { _, err := deps.TiDBNGMonitoringLister.TidbNGMonitorings("ns").Get("x"); return err },
		},
	}
	for kind, s := range seed {
		if err := s.get(); err == nil {
			t.Errorf("%s: lister found ns/x before it was seeded", kind)
		}
		if err := s.add(); err != nil {
			t.Fatalf("%s: seed: %v", kind, err)
		}
		if err := s.get(); err != nil {
			t.Errorf("%s: lister does not read its informer: %v", kind, err)
		}
	}
}

// TestPodCacheLeavesDiscoveryPodsOut: the pod informer lists the operator's
// pods but the discovery pods, which nothing reads.
func TestPodCacheLeavesDiscoveryPodsOut(t *testing.T) {
	t.Parallel()
	pod := func(name, component string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{
			label.ManagedByLabelKey: label.TiDBOperator, label.ComponentLabelKey: component}}}
	}
	kube := kubefake.NewClientset(pod("db-pd-0", "pd"), pod("db-discovery-1", label.DiscoveryLabelVal))
	cfg := DefaultCLIConfig()
	cfg.ClusterScoped = true
	deps := NewDependencies(cfg, kube, pingcapfake.NewSimpleClientset(), nil, nil)
	stop := make(chan struct{})
	defer close(stop)
	informer := deps.KubeInformerFactory.Core().V1().Pods().Informer()
	deps.StartInformers(stop)
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		t.Fatal("pod cache did not sync")
	}
	pods, err := deps.PodLister.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 || pods[0].Name != "db-pd-0" {
		t.Errorf("cached pods %v, want db-pd-0 only", pods)
	}
}

// TestApplyClusterPermissions checks that a cluster-scoped operator holds
// every cluster-wide permission whatever the flags say, and a namespaced
// one only those granted (PVs only while --manage-persistent-volumes).
func TestApplyClusterPermissions(t *testing.T) {
	c := DefaultCLIConfig()
	c.ApplyClusterPermissions(ClusterPermissions{})
	if !c.ReadNodes || !c.ReadStorageClasses || !c.ManagePersistentVolumes {
		t.Errorf("cluster-scoped: %+v", c)
	}
	c = DefaultCLIConfig()
	c.ClusterScoped = false
	c.ApplyClusterPermissions(ClusterPermissions{Nodes: true})
	if !c.ReadNodes || c.ReadStorageClasses || c.ManagePersistentVolumes {
		t.Errorf("namespaced with nodes only: %+v", c)
	}
	c = DefaultCLIConfig()
	c.ClusterScoped, c.ManagePersistentVolumes = false, false
	c.ApplyClusterPermissions(ClusterPermissions{Nodes: true, PersistentVolumes: true, StorageClasses: true})
	if !c.ReadNodes || !c.ReadStorageClasses || c.ManagePersistentVolumes {
		t.Errorf("--manage-persistent-volumes=false must stay off: %+v", c)
	}
}

// TestPVsDenied checks that only an operator that may not patch PVs names
// it, with the chart value that grants it.
func TestPVsDenied(t *testing.T) {
	c := DefaultCLIConfig()
	if got := PVsDenied(c); got != "" || PVsDenied(nil) != "" {
		t.Errorf("PVsDenied with the permission = %q", got)
	}
	c.ClusterScoped = false
	c.ApplyClusterPermissions(ClusterPermissions{Nodes: true, StorageClasses: true})
	if got := PVsDenied(c); !strings.Contains(got, "clusterPermissions.persistentvolumes") {
		t.Errorf("PVsDenied without the permission = %q", got)
	}
}
