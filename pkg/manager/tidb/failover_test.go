package tidb

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

func failoverTC(health map[string]bool, since time.Time) *v1alpha1.TidbCluster {
	one := int32(1)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{TiDB: &v1alpha1.TiDBSpec{Replicas: 2, MaxFailoverCount: &one}}}
	tc.Status.TiDB.Members = map[string]v1alpha1.TiDBMember{}
	for pod, h := range health {
		tc.Status.TiDB.Members[pod] = v1alpha1.TiDBMember{Name: pod, Health: h, LastTransitionTime: metav1.NewTime(since)}
	}
	return tc
}

func TestTiDBFailover(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	cfg := component.FailoverConfig{Enabled: true, Period: 5 * time.Minute}
	cases := []struct {
		name    string
		tc      *v1alpha1.TidbCluster
		cfg     component.FailoverConfig
		want    int
		recover bool
	}{
		{"healthy", failoverTC(map[string]bool{"basic-tidb-0": true, "basic-tidb-1": true}, now.Add(-time.Hour)), cfg, 0, false},
		{"unhealthy within the period", failoverTC(map[string]bool{"basic-tidb-0": true, "basic-tidb-1": false}, now.Add(-time.Minute)), cfg, 0, false},
		{"unhealthy past the period", failoverTC(map[string]bool{"basic-tidb-0": true, "basic-tidb-1": false}, now.Add(-time.Hour)), cfg, 1, false},
		{"capped by maxFailoverCount", failoverTC(map[string]bool{"basic-tidb-0": false, "basic-tidb-1": false}, now.Add(-time.Hour)), cfg, 1, false},
		{"disabled", failoverTC(map[string]bool{"basic-tidb-1": false, "basic-tidb-0": true}, now.Add(-time.Hour)), component.FailoverConfig{Period: time.Minute}, 0, false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := record.NewFakeRecorder(10)
			h := &Component{failover: tt.cfg, recorder: rec, clock: clocktesting.NewFakeClock(now)}
			for i := 0; i < 3; i++ { // repeated syncs never exceed the cap
				if err := h.Failover(context.Background(), tt.tc); err != nil {
					t.Fatal(err)
				}
			}
			if got := int(h.FailoverReplicas(tt.tc)); got != tt.want {
				t.Fatalf("failover replicas %d, want %d (%v)", got, tt.want, tt.tc.Status.TiDB.FailureMembers)
			}
		})
	}
}

func TestTiDBFailoverRecoversWhenHealthyAgain(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	tc := failoverTC(map[string]bool{"basic-tidb-0": true, "basic-tidb-1": false}, now.Add(-time.Hour))
	rec := record.NewFakeRecorder(10)
	h := &Component{failover: component.FailoverConfig{Enabled: true, Period: time.Minute}, recorder: rec, clock: clocktesting.NewFakeClock(now)}
	if err := h.Failover(context.Background(), tc); err != nil || h.FailoverReplicas(tc) != 1 {
		t.Fatalf("want one failure recorded: %v %v", err, tc.Status.TiDB.FailureMembers)
	}
	m := tc.Status.TiDB.Members["basic-tidb-1"]
	m.Health = true
	tc.Status.TiDB.Members["basic-tidb-1"] = m
	if err := h.Failover(context.Background(), tc); err != nil || h.FailoverReplicas(tc) != 0 {
		t.Fatalf("want recovery: %v %v", err, tc.Status.TiDB.FailureMembers)
	}
	if len(rec.Events) != 2 {
		t.Fatalf("want an Unhealthy and a Recovery event, got %d", len(rec.Events))
	}
}
