package dm

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// basicDM is v1.6's examples/dm/dm-cluster.yaml (spec dm.md §14).
const basicDM = `
metadata: {name: basic, namespace: ns}
spec:
  version: v8.5.7
  pvReclaimPolicy: Retain
  discovery: {}
  master: {baseImage: pingcap/dm, maxFailoverCount: 0, replicas: 1, storageSize: 10Gi, requests: {}, config: {}}
  worker: {baseImage: pingcap/dm, maxFailoverCount: 0, replicas: 1, storageSize: 100Gi, requests: {}, config: {}}
`

// tlsDM has TLS, client secrets, a NodePort service with overrides, the v1
// start script, a data sub-directory, host networking and configs.
const tlsDM = `
metadata: {name: secure, namespace: db}
spec:
  version: v8.5.7
  tlsCluster: {enabled: true}
  tlsClientSecretNames: [mysql-tls]
  hostNetwork: true
  configUpdateStrategy: RollingUpdate
  master:
    replicas: 3
    storageSize: 5Gi
    storageClassName: fast
    dataSubDir: data
    startUpScriptVersion: v1
    config: {log-level: warn}
    service: {type: NodePort, portName: api, masterNodePort: 30261, externalTrafficPolicy: Local}
  worker: {replicas: 2, config: {keepalive-ttl: 15}}
`

// parseDM parses a DMCluster manifest strictly and defaults it, as the
// controller does before the members sync.
func parseDM(t *testing.T, manifest string) *v1alpha1.DMCluster {
	t.Helper()
	dc := &v1alpha1.DMCluster{}
	if err := yaml.UnmarshalStrict([]byte(manifest), dc); err != nil {
		t.Fatalf("parse DMCluster: %v", err)
	}
	defaulting.DefaultDMCluster(dc)
	return dc
}

func desired(t *testing.T, dc *v1alpha1.DMCluster) map[string][]metav1.Object {
	t.Helper()
	out := map[string][]metav1.Object{}
	for _, m := range Members(&component.Env{}, dmapi.NewFakeControl()) {
		objs, err := m.(*component.Manager[*v1alpha1.DMCluster]).Desired(dc)
		if err != nil {
			t.Fatalf("build %s: %v", m.Name(), err)
		}
		out[m.Name()] = objs
	}
	return out
}

func TestBuildersGolden(t *testing.T) {
	t.Parallel()
	for name, manifest := range map[string]string{"basic": basicDM, "tls": tlsDM} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for comp, objs := range desired(t, parseDM(t, manifest)) {
				anys := make([]any, 0, len(objs))
				for _, o := range objs {
					anys = append(anys, o)
				}
				golden.Assert(t, name+"-"+comp, anys...)
			}
		})
	}
}

func TestNoWorkerObjectsWithoutSpecWorker(t *testing.T) {
	t.Parallel()
	dc := parseDM(t, basicDM)
	dc.Spec.Worker = nil
	if objs := desired(t, dc)["dm-worker"]; len(objs) != 0 {
		t.Fatalf("dm-worker objects without spec.worker: %d", len(objs))
	}
}

func TestLabelsAreDMs(t *testing.T) {
	t.Parallel()
	for comp, objs := range desired(t, parseDM(t, basicDM)) {
		for _, o := range objs {
			l := o.GetLabels()
			if l["app.kubernetes.io/name"] != "dm-cluster" || l["app.kubernetes.io/component"] != comp ||
				l["app.kubernetes.io/instance"] != "basic" || l["app.kubernetes.io/managed-by"] != "tidb-operator" {
				t.Errorf("%s %s labels = %v", comp, o.GetName(), l)
			}
		}
	}
}

func TestMasterServiceOverrides(t *testing.T) {
	t.Parallel()
	svc := desired(t, parseDM(t, tlsDM))["dm-master"][0].(*corev1.Service)
	p := svc.Spec.Ports[0]
	if svc.Name != "secure-dm-master" || p.Name != "api" || p.NodePort != 30261 || p.Port != 8261 ||
		svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
		t.Fatalf("service = %s %+v %s", svc.Name, p, svc.Spec.ExternalTrafficPolicy)
	}
}

func TestStartScripts(t *testing.T) {
	t.Parallel()
	cm := func(dc *v1alpha1.DMCluster, comp string) string {
		objs := desired(t, dc)[comp]
		for _, o := range objs {
			if c, ok := o.(*corev1.ConfigMap); ok {
				return c.Data[component.StartScriptKey]
			}
		}
		t.Fatalf("no ConfigMap for %s", comp)
		return ""
	}
	plain, secure := parseDM(t, basicDM), parseDM(t, tlsDM)
	cases := []struct {
		name, script string
		want, not    []string
	}{
		{"master default", cm(plain, "dm-master"),
			[]string{`nslookup "${DOMAIN}"`, "--peer-urls=http://0.0.0.0:8291", "DATA_DIR=/var/lib/dm-master\n",
				`/new/${ENCODED_DOMAIN}/dm"`, "${CLUSTER_NAME}-dm-discovery.${NAMESPACE}:10261", "s/8291/8261/g"},
			[]string{"dig ", "https://"}},
		{"master v1 tls subdir", cm(secure, "dm-master"),
			[]string{`dig "${DOMAIN}" A "${DOMAIN}" AAAA +search +short`, "--advertise-peer-urls=https://${DOMAIN}:8291",
				"DATA_DIR=/var/lib/dm-master/data\n"},
			[]string{"nslookup"}},
		{"worker", cm(plain, "dm-worker"),
			[]string{"--join=basic-dm-master:8261", "--advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}:8262",
				`--labels ${STORE_LABELS}`, "exec /dm-worker"},
			[]string{"--data-dir", "nslookup"}},
	}
	for _, c := range cases {
		for _, w := range c.want {
			if !strings.Contains(c.script, w) {
				t.Errorf("%s: script lacks %q", c.name, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.script, n) {
				t.Errorf("%s: script has %q", c.name, n)
			}
		}
	}
}
