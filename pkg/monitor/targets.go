package monitor

import (
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// Target is one monitored cluster as the builders need it: where its pods
// run, whether they serve TLS, and which components it has.
type Target struct {
	// Namespace and Name of the TidbCluster (or DMCluster).
	Namespace, Name string
	// ClusterDomain is the Kubernetes cluster domain of its pods; "" is the local one.
	ClusterDomain string
	// TLS is tlsCluster.enabled: jobs scrape with https and the client certificate.
	TLS bool
	// Components are the scraped components, in job order.
	Components []string
}

// Scraped components besides the TidbCluster's own label values: TiFlash's
// proxy status port and DM's two components.
const (
	TiFlashProxy = "tiflash-proxy"
	DMMaster     = "dm-master"
	DMWorker     = "dm-worker"
)

// tiflashProxyPort is the TiFlash proxy's status port, scraped besides the
// TiFlash metrics port its pods advertise.
const tiflashProxyPort = 20292

// TargetOf returns the target of tc (nil: a cluster the operator cannot
// read; ref is then all that is known, and PD, TiKV and TiDB are scraped).
// Components appear in sync order (components.InSyncOrder), each with its
// descriptor's jobs: TiFlash brings its proxy too.
func TargetOf(ref v1alpha1.TidbClusterRef, monitorNamespace string, tc *v1alpha1.TidbCluster) Target {
	t := Target{Namespace: ref.Namespace, Name: ref.Name, ClusterDomain: ref.ClusterDomain}
	if t.Namespace == "" {
		t.Namespace = monitorNamespace
	}
	if tc == nil {
		t.Components = []string{label.PDLabelVal, label.TiKVLabelVal, label.TiDBLabelVal}
		return t
	}
	if t.ClusterDomain == "" {
		t.ClusterDomain = tc.Spec.ClusterDomain
	}
	t.TLS = tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
	for _, d := range components.InSyncOrder() {
		if _, ok := d.Spec(&tc.Spec); ok {
			t.Components = append(t.Components, d.Jobs()...)
		}
	}
	return t
}

// DMTarget returns the target of a DMCluster named by ref: dm-master and dm-worker.
func DMTarget(ref v1alpha1.ClusterRef, monitorNamespace string) Target {
	t := Target{Namespace: ref.Namespace, Name: ref.Name, ClusterDomain: ref.ClusterDomain,
		Components: []string{DMMaster, DMWorker}}
	if t.Namespace == "" {
		t.Namespace = monitorNamespace
	}
	return t
}
