package tidbinit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql/tidbsqltest"
)

// TestTargetSkipInternalClientCA: a client Secret without ca.crt is refused
// while TiDB's certificate is verified; with skipInternalClientCA the
// target's TLS verifies nothing and still carries the client certificate.
func TestTargetSkipInternalClientCA(t *testing.T) {
	t.Parallel()
	cert, key := tidbsqltest.SelfSigned(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "basic-tidb-client-secret", Namespace: "ns"},
		Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}}
	f := newFixture(t, secret)
	cluster := newCluster(true)
	cluster.Spec.TiDB.TLSClient = &v1alpha1.TiDBTLSClient{Enabled: true}
	if _, err := f.step.target(context.Background(), cluster); err == nil {
		t.Error("verifying TiDB without ca.crt: no error")
	}
	cluster.Spec.TiDB.TLSClient.SkipInternalClientCA = true
	got, err := f.step.target(context.Background(), cluster)
	if err != nil {
		t.Fatal(err)
	}
	if got.TLS == nil || !got.TLS.InsecureSkipVerify || len(got.TLS.Certificates) != 1 {
		t.Errorf("TLS %+v, want unverified with the client certificate", got.TLS)
	}
}
