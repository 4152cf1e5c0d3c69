package tidbinit

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// clientKeyPair returns a self-signed client certificate and its key as PEM.
func clientKeyPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestTargetSkipInternalClientCA: a client Secret without ca.crt is refused
// while TiDB's certificate is verified; with skipInternalClientCA the
// target's TLS verifies nothing and still carries the client certificate.
func TestTargetSkipInternalClientCA(t *testing.T) {
	t.Parallel()
	cert, key := clientKeyPair(t)
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
