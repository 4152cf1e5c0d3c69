package validation

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestValidateTiCDC(t *testing.T) {
	t.Parallel()
	ticdc := func(mutate func(c *v1alpha1.TiCDCSpec)) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) { mutate(tc.Spec.TiCDC) }
	}
	config := func(items map[string]any) func(*v1alpha1.TidbCluster) {
		return ticdc(func(c *v1alpha1.TiCDCSpec) { c.Config = v1alpha1.NewConfig(items) })
	}
	const base = "spec.ticdc"
	runClusterCases(t, []clusterCase{
		{name: "sink TLS Secrets and a timeout", mutate: ticdc(func(c *v1alpha1.TiCDCSpec) {
			c.TLSClientSecretNames = []string{"kafka-tls", "mysql-tls"}
			c.GracefulShutdownTimeout = &metav1.Duration{Duration: 0}
		})},
		{name: "negative timeout", mutate: ticdc(func(c *v1alpha1.TiCDCSpec) {
			c.GracefulShutdownTimeout = &metav1.Duration{Duration: -time.Minute}
		}), want: []fieldErr{{field.ErrorTypeInvalid, base + ".gracefulShutdownTimeout"}}},
		{name: "Secret names that cannot name a volume, twice, or taken", mutate: ticdc(func(c *v1alpha1.TiCDCSpec) {
			c.StorageVolumes = []v1alpha1.StorageVolume{{Name: "sort", StorageSize: "1Gi"}}
			c.AdditionalVolumes = []corev1.Volume{{Name: "extra"}}
			c.TLSClientSecretNames = []string{"a.b", "ok", "ok", "config", "ticdc-sort", "extra", ""}
		}), want: []fieldErr{
			{field.ErrorTypeInvalid, base + ".tlsClientSecretNames[0]"},
			{field.ErrorTypeDuplicate, base + ".tlsClientSecretNames[2]"},
			{field.ErrorTypeInvalid, base + ".tlsClientSecretNames[3]"},
			{field.ErrorTypeInvalid, base + ".tlsClientSecretNames[4]"},
			{field.ErrorTypeInvalid, base + ".tlsClientSecretNames[5]"},
			{field.ErrorTypeInvalid, base + ".tlsClientSecretNames[6]"},
		}},
		{name: "flag items of the right types", mutate: config(map[string]any{
			"gc-ttl": json.Number("3600"), "log-level": "debug", "log-file": "/dev/stderr", "tz": "UTC",
			"sorter": map[string]any{"dir": "/x"},
		})},
		{name: "gc-ttl from TOML", mutate: config(map[string]any{"gc-ttl": int64(60)})},
		{name: "flag items of other types", mutate: config(map[string]any{
			"gc-ttl": json.Number("1.5"), "log-level": int64(3), "tz": true,
		}), want: []fieldErr{
			{field.ErrorTypeInvalid, base + ".config.gc-ttl"},
			{field.ErrorTypeInvalid, base + ".config.log-level"},
			{field.ErrorTypeInvalid, base + ".config.tz"},
		}},
		{name: "negative gc-ttl", mutate: config(map[string]any{"gc-ttl": int64(-1)}),
			want: []fieldErr{{field.ErrorTypeInvalid, base + ".config.gc-ttl"}}},
	})
}
