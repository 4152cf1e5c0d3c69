package tiflash

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// tiflashSeeds are clusters with TiFlash, since few examples have one: the
// golden cases and odd configs (TOML strings and tables, log files in
// additional volumes, old versions, TLS).
var tiflashSeeds = []string{
	basicCluster,
	multiDiskCluster,
	`{metadata: {name: old}, spec: {version: v5.3.0, tlsCluster: {enabled: true}, pd: {replicas: 1, requests: {storage: 1Gi}},
	  tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 1Gi}}}], config: {config: "path = \"/data0/x\""}}}}`,
	`{metadata: {name: logs}, spec: {version: v6.5.0, pd: {replicas: 1, requests: {storage: 1Gi}},
	  tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 1Gi}}}],
	    additionalVolumes: [{name: logs, emptyDir: {}}], additionalVolumeMounts: [{name: logs, mountPath: /logs}],
	    config: {config: {logger: {log: /logs/s.log, errorlog: /logs/e.log}}, proxy: {security: {cert-allowed-cn: [a]}}}}}}`,
	`{metadata: {name: span}, spec: {acrossK8s: true, preferIPv6: true, cluster: {name: other},
	  tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 1Gi}}}]}}}`,
}

// FuzzBuild builds TiFlash's Services, ConfigMap and StatefulSet (component.Desired, the builders a sync
// runs) from every mutated example, corpus or TiFlash seed cluster that is valid after defaulting, and
// asserts that building never panics, never changes the cluster and is deterministic.
func FuzzBuild(f *testing.F) {
	golden.FuzzBuild(f, New(&component.Env{}), tiflashSeeds, "POD_NUM x")
}

// TestFuzzSeedsReachTheBuilders checks that every TiFlash seed is a valid cluster with TiFlash as is, so
// that the fuzzer starts inside the builders.
func TestFuzzSeedsReachTheBuilders(t *testing.T) {
	t.Parallel()
	golden.SeedsReachBuilders(t, New(&component.Env{}), tiflashSeeds)
}

// buildObjects builds TiFlash's objects as the builders return them, in write order: the Services,
// the ConfigMap (under its InPlace name) and the StatefulSet mounting it, before the skeleton sets
// its replicas (the builder tests' buildAll).
func buildObjects(tc *v1alpha1.TidbCluster) ([]metav1.Object, error) {
	var out []metav1.Object
	for _, s := range newServices(tc) {
		out = append(out, s)
	}
	data, err := newConfigData(tc)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: names.Member(tc.Name, names.TiFlash), Namespace: tc.Namespace,
			Labels: component.Labels(tc, names.TiFlash)},
		Data: data,
	}
	sts, err := newStatefulSet(tc, cm.Name)
	if err != nil {
		return nil, err
	}
	return append(out, cm, sts), nil
}
