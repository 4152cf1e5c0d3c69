package validation

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

// basicClusterYAML is written the way the TiDB Operator's examples are: PD
// config as a map, TiKV config as a TOML string, TiDB with a NodePort Service.
const basicClusterYAML = `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: basic
  namespace: demo
spec:
  version: v8.5.0
  timezone: UTC
  pvReclaimPolicy: Retain
  enableDynamicConfiguration: true
  configUpdateStrategy: RollingUpdate
  discovery: {}
  helper:
    image: alpine:3.16.0
  pd:
    baseImage: pingcap/pd
    maxFailoverCount: 0
    replicas: 3
    requests:
      storage: "1Gi"
    config:
      log:
        level: info
      replication:
        max-replicas: 3
  tikv:
    baseImage: pingcap/tikv
    maxFailoverCount: 0
    evictLeaderTimeout: 1m
    replicas: 3
    requests:
      storage: "1Gi"
    config: |
      [storage]
        reserve-space = "0MB"
      [rocksdb]
        max-open-files = 256
  tidb:
    baseImage: pingcap/tidb
    maxFailoverCount: 0
    replicas: 2
    service:
      type: NodePort
    config: {}
`

func TestExampleClusterIsValid(t *testing.T) {
	t.Parallel()
	var tc v1alpha1.TidbCluster
	if err := yaml.UnmarshalStrict([]byte(basicClusterYAML), &tc); err != nil {
		t.Fatalf("unmarshal example: %v", err)
	}
	defaulting.SetTidbClusterDefaults(&tc)
	if errs := ValidateTidbCluster(&tc); len(errs) > 0 {
		t.Fatalf("ValidateTidbCluster(example) = %v, want no errors", errs)
	}

	wantPD := map[string]any{"log": map[string]any{"level": "info"}, "replication": map[string]any{"max-replicas": "3"}}
	if diff := cmp.Diff(wantPD, normalize(tc.Spec.PD.Config.Items)); diff != "" {
		t.Errorf("PD config from a map (-want +got):\n%s", diff)
	}
	wantKV := map[string]any{"storage": map[string]any{"reserve-space": "0MB"}, "rocksdb": map[string]any{"max-open-files": "256"}}
	if diff := cmp.Diff(wantKV, normalize(tc.Spec.TiKV.Config.Items)); diff != "" {
		t.Errorf("TiKV config from a TOML string (-want +got):\n%s", diff)
	}
	wantDB := map[string]any{"log": map[string]any{"file": map[string]any{"max-backups": "3"}}}
	if diff := cmp.Diff(wantDB, normalize(tc.Spec.TiDB.Config.Items)); diff != "" {
		t.Errorf("TiDB config after defaulting (-want +got):\n%s", diff)
	}

	images := map[defaulting.Component]string{
		defaulting.ComponentPD: "pingcap/pd:v8.5.0", defaulting.ComponentTiKV: "pingcap/tikv:v8.5.0", defaulting.ComponentTiDB: "pingcap/tidb:v8.5.0",
	}
	for c, want := range images {
		if got := defaulting.NewComponentAccessor(&tc, c).Image(); got != want {
			t.Errorf("%s image = %q, want %q", c, got, want)
		}
	}
	if got := *tc.Spec.TiDB.Service.ExposeStatus; !got {
		t.Errorf("tidb.service.exposeStatus = false, want the default true")
	}
}

// normalize turns every scalar of a config tree into its printed form, so
// that a JSON number (json.Number) and a TOML integer (int64) compare equal.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalize(e)
		}
		return out
	default:
		return fmt.Sprint(t)
	}
}
