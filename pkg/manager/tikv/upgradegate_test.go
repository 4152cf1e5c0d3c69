package tikv

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestAllStoresUpGate: with the annotation, a restart waits (and asks PD
// nothing) while any TiKV or TiFlash store is not Up; once all are Up, or
// without the annotation, it goes on.
func TestAllStoresUpGate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		states   map[string]string
		tiflash  string
		annotate bool
		wait     string
	}{
		{"a TiKV store Down waits", map[string]string{"basic-tikv-0": "Up", "basic-tikv-1": "Down", "basic-tikv-2": "Up"}, "", true, "is Down, not Up"},
		{"a TiKV store Offline waits", map[string]string{"basic-tikv-0": "Up", "basic-tikv-1": "Offline", "basic-tikv-2": "Up"}, "", true, "is Offline"},
		{"a TiFlash store Disconnected waits", map[string]string{"basic-tikv-0": "Up", "basic-tikv-1": "Up", "basic-tikv-2": "Up"}, "Disconnected", true, "is Disconnected"},
		{"all Up goes on", map[string]string{"basic-tikv-0": "Up", "basic-tikv-1": "Up", "basic-tikv-2": "Up"}, "Up", true, ""},
		{"without the annotation a Down store does not hold", map[string]string{"basic-tikv-0": "Up", "basic-tikv-1": "Down", "basic-tikv-2": "Up"}, "", false, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tc := storesTC(tt.states, now) // leader counts 0: nothing to evict
			if tt.tiflash != "" {
				tc.Status.TiFlash.Stores = map[string]v1alpha1.TiKVStore{"9": {ID: "9", PodName: "basic-tiflash-0", State: tt.tiflash}}
			}
			if tt.annotate {
				tc.Annotations = map[string]string{label.AnnTiKVCheckAllStoresUpBeforeUpgrade: "true"}
			}
			ctl := pdapi.NewFakeControl()
			h := newTiKV(ctl, nil, record.NewFakeRecorder(10), now, component.FailoverConfig{})
			err := h.PreUpgradePod(context.Background(), tc, 2)
			re, waiting := flow.AsRequeue(err)
			switch {
			case tt.wait == "" && err != nil:
				t.Fatalf("PreUpgradePod = %v, want nil", err)
			case tt.wait != "" && (!waiting || !strings.Contains(re.Reason, tt.wait) || !strings.Contains(re.Reason, label.AnnTiKVCheckAllStoresUpBeforeUpgrade)):
				t.Fatalf("PreUpgradePod = %v, want a wait naming the annotation and %q", err, tt.wait)
			}
			if w := ctl.ClusterClient("ns", "basic").WriteCalls(); len(w) != 0 {
				t.Errorf("PD writes %v, want none", w)
			}
		})
	}
}
