package v1layout

import (
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// ClusterYAML is a TidbCluster named basic with every component the
// takeover covers: PD, TiKV, TiDB (binlog to Pump), TiFlash, TiCDC, Pump
// and TiProxy, one pod each; its config changes roll the pods, so v1
// names its ConfigMaps by their content's hash (TiProxy's excepted: v1
// always updates it in place). Like examples/basic it enables dynamic
// configuration, which the e2e's v1 TiKV script is written for.
const ClusterYAML = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: basic
spec:
  version: v8.5.0
  timezone: UTC
  configUpdateStrategy: RollingUpdate
  enableDynamicConfiguration: true
  pvReclaimPolicy: Retain
  helper:
    image: alpine:3.20
  discovery: {}
  pd:
    baseImage: pingcap/pd
    replicas: 1
    maxFailoverCount: 0
    requests:
      storage: 1Gi
    config: {}
  tikv:
    baseImage: pingcap/tikv
    replicas: 1
    maxFailoverCount: 0
    requests:
      storage: 1Gi
    config: {}
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
    maxFailoverCount: 0
    service:
      type: ClusterIP
    config: {}
  tiflash:
    baseImage: pingcap/tiflash
    replicas: 1
    maxFailoverCount: 0
    storageClaims:
      - resources:
          requests:
            storage: 1Gi
    config:
      config:
        logger:
          level: info
  ticdc:
    baseImage: pingcap/ticdc
    replicas: 1
  pump:
    baseImage: pingcap/tidb-binlog
    replicas: 1
    requests:
      storage: 1Gi
    config:
      gc: 7
  tiproxy:
    baseImage: pingcap/tiproxy
    version: v1.3.0
    replicas: 1
`

// ClusterPods is how many pods ClusterYAML runs: one per component and
// discovery.
const ClusterPods = 8

// Cluster decodes ClusterYAML.
func Cluster() (*v1alpha1.TidbCluster, error) {
	tc := &v1alpha1.TidbCluster{}
	return tc, yaml.UnmarshalStrict([]byte(ClusterYAML), tc)
}
