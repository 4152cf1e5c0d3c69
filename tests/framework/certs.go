package framework

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
	"k8s.io/client-go/kubernetes"
)

// Keys of the TLS Secrets the operator and the components mount (kubernetes.io/tls plus the CA).
const (
	SecretCAKey   = "ca.crt"
	SecretCertKey = "tls.crt"
	SecretKeyKey  = "tls.key"
)

// CA is a throwaway certificate authority for TLS tests: it signs the cluster's cert Secrets, and the
// simulator (given CertPEM and KeyPEM) issues its servers' certificates with it.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	serial  int64
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA generates a CA (ECDSA P-256, valid for a day); it fails the test on error.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name, Organization: []string{"kubetidb tests"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("create CA certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse CA certificate: %v", err)
	}
	return &CA{cert: cert, key: key, serial: 1, CertPEM: certPEM(der), KeyPEM: keyPEM(t, key)}
}

// Issue signs a certificate for commonName with the DNS names hosts, usable as server and client
// certificate (components are both), and returns it and its key in PEM.
func (ca *CA) Issue(t testing.TB, commonName string, hosts ...string) (cert, key []byte) {
	t.Helper()
	k := newKey(t)
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: commonName},
		DNSNames:  hosts,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		t.Fatalf("issue certificate %s: %v", commonName, err)
	}
	return certPEM(der), keyPEM(t, k)
}

// TLSSecret is a kubernetes.io/tls Secret name in namespace with ca.crt, tls.crt and tls.key: a fresh
// certificate for commonName and hosts.
func (ca *CA) TLSSecret(t testing.TB, namespace, name, commonName string, hosts ...string) *corev1.Secret {
	t.Helper()
	cert, key := ca.Issue(t, commonName, hosts...)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{SecretCAKey: ca.CertPEM, SecretCertKey: cert, SecretKeyKey: key},
	}
}

// ClusterSecrets returns the Secrets a TidbCluster tc in namespace with spec.tlsCluster.enabled and
// spec.tidb.tlsClient.enabled mounts or the operator reads, named as the TiDB Operator names them:
// `<tc>-<component>-cluster-secret` for each of components (server certificates for the component's
// Services and pods), `<tc>-cluster-client-secret` (the operator's client certificate),
// `<tc>-tidb-server-secret` and `<tc>-tidb-client-secret` (MySQL protocol).
func (ca *CA) ClusterSecrets(t testing.TB, namespace, tc string, components ...string) []*corev1.Secret {
	t.Helper()
	var out []*corev1.Secret
	for _, comp := range components {
		svc, peer := tc+"-"+comp, tc+"-"+comp+"-peer"
		var hosts []string
		for _, suffix := range []string{"", "." + namespace, "." + namespace + ".svc"} {
			hosts = append(hosts, svc+suffix, peer+suffix, "*."+peer+suffix)
		}
		out = append(out, ca.TLSSecret(t, namespace, svc+"-cluster-secret", comp, hosts...))
	}
	tidb := []string{tc + "-tidb", tc + "-tidb." + namespace, tc + "-tidb." + namespace + ".svc"}
	return append(out,
		ca.TLSSecret(t, namespace, tc+"-cluster-client-secret", tc+"-cluster-client"),
		ca.TLSSecret(t, namespace, tc+"-tidb-server-secret", "tidb-server", tidb...),
		ca.TLSSecret(t, namespace, tc+"-tidb-client-secret", tc+"-tidb-client"))
}

// CreateSecrets creates secrets; it fails the test on the first error.
func CreateSecrets(t testing.TB, ctx context.Context, kube kubernetes.Interface, secrets ...*corev1.Secret) {
	t.Helper()
	for _, s := range secrets {
		if _, err := kube.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Secret %s/%s: %v", s.Namespace, s.Name, err)
		}
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	return key
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(t testing.TB, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("marshal key: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}
