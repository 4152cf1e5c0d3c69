//go:build integration

package sqle2e

import (
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// skipCACluster gives root a random password over TLS without verifying
// TiDB's certificate.
const skipCACluster = `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: basic
spec:
  version: v8.5.0
  timezone: UTC
  pvReclaimPolicy: Delete
  discovery: {}
  pd: {baseImage: pingcap/pd, replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 1, requests: {storage: 1Gi}, config: {}}
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
    service: {type: ClusterIP}
    tlsClient: {enabled: true, skipInternalClientCA: true}
    initializer: {createPassword: true}
`

// TestSkipInternalClientCA: TiDB's MySQL port is a MariaDB serving TLS with
// a certificate of one CA, where root may log in only over TLS; the
// cluster's client Secret holds a client certificate of that CA but the CA
// certificate of another one. With skipInternalClientCA the operator logs
// in anyway (encrypted, unverified, presenting the client certificate) and
// gives root the random password of Secret basic-init. (Verifying, it is
// refused for the CA alone: the certificate names the Service it dials.)
func TestSkipInternalClientCA(t *testing.T) {
	operator.InstallCRDs(t)
	serverCA, otherCA := framework.NewCA(t, "tidb server CA"), framework.NewCA(t, "another CA")
	env := framework.NewEnv(t)
	service := "basic-tidb." + env.Namespace + ".svc"
	b := startBackend(t, serverTLSArgs(t, serverCA, service)...)
	admin, err := b.server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	if _, err := admin.Exec("ALTER USER 'root'@'%' REQUIRE SSL"); err != nil {
		t.Fatal(err)
	}

	pc := versioned.NewForConfigOrDie(env.Config)
	client := serverCA.TLSSecret(t, env.Namespace, "basic-tidb-client-secret", "basic-tidb-client")
	client.Data[framework.SecretCAKey] = otherCA.CertPEM
	framework.CreateSecrets(t, env.Ctx, env.Kube, client,
		serverCA.TLSSecret(t, env.Namespace, "basic-tidb-server-secret", "tidb-server", service))
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAML(t, env.Ctx, skipCACluster, env.Namespace)
	waitReady(t, env, pc, "basic", "Ready with passwordInitialized over TLS", passwordInitialized)

	secret, err := env.Kube.CoreV1().Secrets(env.Namespace).Get(env.Ctx, "basic-init", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withOwnCA := serverCA.TLSSecret(t, env.Namespace, "check", "check").Data
	cfg, err := tidbsql.TLSConfigFromSecretData(withOwnCA, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServerName = service
	target := tidbsql.Target{Addr: b.server.Addr, TLS: cfg}
	if err := tidbsql.CheckPassword(env.Ctx, target, tidbsql.RootUser, string(secret.Data["root"])); err != nil {
		t.Errorf("root with Secret basic-init's password over TLS: %v", err)
	}
	noFailedAttempt(t, env)
}

// serverTLSArgs writes a server certificate of ca for host (TiDB's
// Service, so that only the CA can fail a verifying client) and returns
// mariadbd's TLS flags.
func serverTLSArgs(t *testing.T, ca *framework.CA, host string) []string {
	t.Helper()
	dir := t.TempDir()
	cert, key := ca.Issue(t, "tidb-server", host)
	files := map[string][]byte{"ca.pem": ca.CertPEM, "server.pem": cert, "server-key.pem": key}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--ssl-ca=" + filepath.Join(dir, "ca.pem"), "--ssl-cert=" + filepath.Join(dir, "server.pem"),
		"--ssl-key=" + filepath.Join(dir, "server-key.pem")}
}
