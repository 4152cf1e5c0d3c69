// Command tls-secrets prints, as a Kubernetes List in JSON for `kubectl apply -f -`, the cert Secrets
// of one TLS TidbCluster signed by a fresh CA of its own: `<tc>-<component>-cluster-secret` per
// component (server and client certificate for the component's Services and pods),
// `<tc>-cluster-client-secret` (the operator's client certificate) and, for TiDB's MySQL port,
// `<tc>-tidb-server-secret` and `<tc>-tidb-client-secret`. Each holds ca.crt, tls.crt and tls.key.
// For demos and tests only: the CA key is thrown away.
//
//	go run ./hack/tools/tls-secrets -namespace demo -cluster tls -components pd,tikv,tidb | kubectl apply -f -
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"
)

// authority is the throwaway CA that signs one cluster's certificates.
type authority struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    []byte
	serial int64
}

func newAuthority(name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name, Organization: []string{"kubetidb demo"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, serial: 1, pem: encode("CERTIFICATE", der)}, nil
}

// issue signs a server-and-client certificate for commonName and the DNS names hosts.
func (a *authority) issue(commonName string, hosts []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	a.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(a.serial), Subject: pkix.Name{CommonName: commonName}, DNSNames: hosts,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return encode("CERTIFICATE", der), encode("EC PRIVATE KEY", keyDER), nil
}

func encode(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// secret is a kubernetes.io/tls Secret with the CA, as a generic object.
func (a *authority) secret(namespace, name, commonName string, hosts []string) (map[string]any, error) {
	cert, key, err := a.issue(commonName, hosts)
	if err != nil {
		return nil, fmt.Errorf("issue %s: %w", name, err)
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"data":     map[string][]byte{"ca.crt": a.pem, "tls.crt": cert, "tls.key": key},
	}, nil
}

// serviceHosts are the names a component's pods answer on: its Service, its headless peer Service
// and every pod under it, short and namespace-qualified, with .svc and with .svc.<domain>.
func serviceHosts(tc, comp, namespace, domain string) []string {
	svc, peer := tc+"-"+comp, tc+"-"+comp+"-peer"
	suffixes := []string{"", "." + namespace, "." + namespace + ".svc"}
	if domain != "" {
		suffixes = append(suffixes, "."+namespace+".svc."+domain)
	}
	var hosts []string
	for _, s := range suffixes {
		hosts = append(hosts, svc+s, peer+s, "*."+peer+s)
	}
	return hosts
}

func run() error {
	namespace := flag.String("namespace", "default", "namespace of the Secrets")
	tc := flag.String("cluster", "tls", "TidbCluster name")
	comps := flag.String("components", "pd,tikv,tidb", "components with a <tc>-<component>-cluster-secret, comma-separated")
	domain := flag.String("cluster-domain", "", "also name <svc>.<ns>.svc.<domain> in the certificates")
	flag.Parse()
	ca, err := newAuthority(*tc + " CA")
	if err != nil {
		return err
	}
	type want struct {
		name, cn string
		hosts    []string
	}
	var wants []want
	for _, comp := range strings.Split(*comps, ",") {
		if comp = strings.TrimSpace(comp); comp != "" {
			wants = append(wants, want{*tc + "-" + comp + "-cluster-secret", comp, serviceHosts(*tc, comp, *namespace, *domain)})
		}
	}
	tidb := serviceHosts(*tc, "tidb", *namespace, *domain)
	wants = append(wants, want{*tc + "-cluster-client-secret", *tc + "-cluster-client", nil},
		want{*tc + "-tidb-server-secret", "tidb-server", tidb}, want{*tc + "-tidb-client-secret", *tc + "-tidb-client", nil})
	items := make([]any, 0, len(wants))
	for _, w := range wants {
		s, err := ca.secret(*namespace, w.name, w.cn, w.hosts)
		if err != nil {
			return err
		}
		items = append(items, s)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tls-secrets:", err)
		os.Exit(1)
	}
}
