package tidb

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestGateWaitsForAnOnlinePump: with spec.pump TiDB starts only once the
// binlog registry has an online pump (the TiDB Operator's PumpIsAvailable).
func TestGateWaitsForAnOnlinePump(t *testing.T) {
	t.Parallel()
	tc := observedCluster()
	tc.Status.TiKV.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: 1}
	tc.Status.TiKV.Stores = map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: "Up"}}
	c := &Component{}
	if why := c.Gate(tc); why != "" {
		t.Fatalf("without Pump the gate waits: %s", why)
	}
	tc.Spec.Pump = &v1alpha1.PumpSpec{Replicas: 1}
	tc.Status.Pump.Members = []*v1alpha1.PumpNodeStatus{{NodeID: "db-pump-0:8250", State: "offline"}}
	if why := c.Gate(tc); !strings.Contains(why, "online Pump") {
		t.Fatalf("gate with no online pump = %q, want a wait for an online Pump", why)
	}
	tc.Status.Pump.Members = append(tc.Status.Pump.Members, &v1alpha1.PumpNodeStatus{NodeID: "db-pump-1:8250", State: "online"})
	if why := c.Gate(tc); why != "" {
		t.Errorf("gate with an online pump = %q, want none", why)
	}
}
