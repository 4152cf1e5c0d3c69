package tidbsql

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// Keys of the TiDB client Secret `<tc>-tidb-client-secret` (kubernetes.io/tls
// with the CA).
const (
	SecretCAKey   = "ca.crt"
	SecretCertKey = "tls.crt"
	SecretKeyKey  = "tls.key"
)

// ClientSecretName is the Secret with the client certificate for TiDB's
// MySQL port of TidbCluster tcName when spec.tidb.tlsClient.enabled is true.
func ClientSecretName(tcName string) string { return tcName + "-tidb-client-secret" }

// TLSConfigFromSecretData builds the TLS config of a MySQL connection from
// a client Secret's data: the server is verified against ca.crt (its name
// is the Service host the driver dials), and tls.crt/tls.key, when both are
// present, are the client certificate (a cluster with disableClientAuthn
// needs none). It errors when ca.crt is missing or holds no PEM
// certificate, or the key pair is invalid.
func TLSConfigFromSecretData(data map[string][]byte) (*tls.Config, error) {
	if len(data[SecretCAKey]) == 0 {
		return nil, fmt.Errorf("TiDB client secret has no %q", SecretCAKey)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data[SecretCAKey]) {
		return nil, errors.New("TiDB client secret: no PEM certificate in " + SecretCAKey)
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if len(data[SecretCertKey]) > 0 || len(data[SecretKeyKey]) > 0 {
		cert, err := tls.X509KeyPair(data[SecretCertKey], data[SecretKeyKey])
		if err != nil {
			return nil, fmt.Errorf("TiDB client secret: %s/%s: %w", SecretCertKey, SecretKeyKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
