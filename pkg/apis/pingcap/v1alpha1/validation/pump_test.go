package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestValidatePump(t *testing.T) {
	t.Parallel()
	config := func(items map[string]any) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { tc.Spec.Pump.Config = v1alpha1.NewConfig(items) }
	}
	const base = "spec.pump"
	runClusterCases(t, []clusterCase{
		{name: "no config", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.Pump.Config = nil }},
		{name: "the examples' config", mutate: config(map[string]any{
			"addr": "0.0.0.0:8250", "gc": int64(7), "heartbeat-interval": int64(2), "log-level": "warn",
			"security": map[string]any{"ssl-ca": "/x"}, "storage": map[string]any{"sync-log": true},
		})},
		{name: "log-level not a string", mutate: config(map[string]any{"log-level": int64(1)}),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.log-level"}}},
		{name: "tables as scalars", mutate: config(map[string]any{"security": "tls", "storage": int64(1)}),
			want: []fieldErr{
				{field.ErrorTypeInvalid, base + ".config.security"},
				{field.ErrorTypeInvalid, base + ".config.storage"},
			}},
		{name: "no data volume size", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.Pump.Requests = nil },
			want: []fieldErr{{field.ErrorTypeRequired, base + ".requests.storage"}}},
	})
}
