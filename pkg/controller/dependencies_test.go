package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
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
