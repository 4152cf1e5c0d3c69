package simulator

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// serverSecret issues a server certificate for hosts and returns it as a cluster Secret with ca.crt.
func (ca *testCA) serverSecret(t *testing.T, name string, hosts ...string) *corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: name}, DNSNames: hosts,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := ca.pem(t)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "1"},
		Data: map[string][]byte{
			secretCertKey: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			secretKeyKey:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
			secretCAKey:   caPEM,
		},
	}
}

// withSecrets makes h's server read cluster Secrets from a fake API server holding secrets.
func withSecrets(t *testing.T, h *harness, secrets ...*corev1.Secret) {
	t.Helper()
	kube := fake.NewClientset()
	for _, s := range secrets {
		if _, err := kube.CoreV1().Secrets(s.Namespace).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h.srv.secrets = newClusterSecrets(kube, "", logr.Discard())
	h.srv.secrets.start(ctx)
}

func getStatus(client *http.Client, u string) (int, error) {
	resp, err := client.Get(u)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

func TestTLSClusterOwnSecretServed(t *testing.T) {
	t.Parallel()
	simCA, clusterCA := newTestCA(t, "simulator CA"), newTestCA(t, "basic's own CA")
	h, srv := tlsHarness(t, simCA)
	withSecrets(t, h, clusterCA.serverSecret(t, "basic-pd-cluster-secret", "basic-pd.default", "*.basic-pd-peer.default.svc"))
	pdURL := "https://basic-pd.default:2379/pd/api/v1/members"

	if code, err := getStatus(httpsClient(t, srv, clusterCA.cert, clusterCA.client(t)), pdURL); err != nil || code != http.StatusOK {
		t.Errorf("PD with the cluster's own certificate: %d %v, want 200", code, err)
	}
	if _, err := getStatus(httpsClient(t, srv, simCA.cert, simCA.client(t)), pdURL); err == nil {
		t.Error("PD served a certificate of the simulator's CA although the cluster has its own Secret")
	}
	if _, err := getStatus(httpsClient(t, srv, clusterCA.cert, simCA.client(t)), pdURL); err == nil {
		t.Error("PD accepted a client certificate of another CA than its Secret's ca.crt")
	}
	// TiKV has no Secret of its own: the simulator's CA issues its certificate, as before.
	tikvURL := "https://basic-tikv-0.basic-tikv-peer.default.svc:20180/status"
	if code, err := getStatus(httpsClient(t, srv, simCA.cert, simCA.client(t)), tikvURL); err != nil || code != http.StatusOK {
		t.Errorf("TiKV with the simulator CA's certificate: %d %v, want 200", code, err)
	}
}

func TestTLSClusterOwnSecretWithoutSimulatorCA(t *testing.T) {
	t.Parallel()
	clusterCA := newTestCA(t, "basic's own CA")
	h, srv := tlsHarness(t, nil)
	withSecrets(t, h,
		clusterCA.serverSecret(t, "basic-pd-cluster-secret", "basic-pd.default"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "basic-tidb-cluster-secret", Namespace: "default"}})
	client := httpsClient(t, srv, clusterCA.cert, clusterCA.client(t))
	if code, err := getStatus(client, "https://basic-pd.default:2379/pd/api/v1/members"); err != nil || code != http.StatusOK {
		t.Errorf("PD with the cluster's own certificate and no simulator CA: %d %v, want 200", code, err)
	}
	if _, err := getStatus(client, "https://basic-tikv-0.basic-tikv-peer.default.svc:20180/status"); err == nil ||
		!strings.Contains(err.Error(), "Not Implemented") {
		t.Errorf("TiKV without a Secret or CA: %v, want 501 Not Implemented", err)
	}
	if _, err := getStatus(client, "https://basic-tidb.default:10080/status"); err == nil ||
		!strings.Contains(err.Error(), "Internal Server Error") {
		t.Errorf("TiDB with a Secret lacking its keys: %v, want the CONNECT refused with 500", err)
	}
}
