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
// a client Secret's data. The server is verified against ca.crt (its name
// is the Service host the driver dials) unless skipCA
// (spec.tidb.tlsClient.skipInternalClientCA): then ca.crt is neither needed
// nor read, and TiDB's certificate is accepted unverified — the connection
// is still encrypted. Either way tls.crt/tls.key, when both are present,
// are the client certificate (a cluster with disableClientAuthn needs
// none). It errors when ca.crt is needed but missing or holds no PEM
// certificate, or when the key pair is invalid.
func TLSConfigFromSecretData(data map[string][]byte, skipCA bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if skipCA {
		// The user asked for it: TiDB's certificate is signed by a CA the
		// operator is not given.
		cfg.InsecureSkipVerify = true //nolint:gosec // spec.tidb.tlsClient.skipInternalClientCA
	} else {
		roots, err := secretRoots(data)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = roots
	}
	if len(data[SecretCertKey]) > 0 || len(data[SecretKeyKey]) > 0 {
		cert, err := tls.X509KeyPair(data[SecretCertKey], data[SecretKeyKey])
		if err != nil {
			return nil, fmt.Errorf("TiDB client secret: %s/%s: %w", SecretCertKey, SecretKeyKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// secretRoots returns the pool of the Secret's ca.crt.
func secretRoots(data map[string][]byte) (*x509.CertPool, error) {
	if len(data[SecretCAKey]) == 0 {
		return nil, fmt.Errorf("TiDB client secret has no %q", SecretCAKey)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data[SecretCAKey]) {
		return nil, errors.New("TiDB client secret: no PEM certificate in " + SecretCAKey)
	}
	return roots, nil
}
