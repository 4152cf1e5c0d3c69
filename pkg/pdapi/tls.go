package pdapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// Keys of the client TLS Secret `<tc>-cluster-client-secret` (a kubernetes.io/tls Secret with the CA).
const (
	TLSSecretCAKey   = "ca.crt"
	TLSSecretCertKey = "tls.crt"
	TLSSecretKeyKey  = "tls.key"
)

// ClusterClientTLSSecretName is the Secret holding the client certificate the operator presents to
// PD, TiKV and TiDB of TidbCluster tcName when spec.tlsCluster.enabled is true.
func ClusterClientTLSSecretName(tcName string) string {
	return tcName + "-cluster-client-secret"
}

// TLSConfigFromSecretData builds a client TLS config from the data of a client TLS Secret: the server
// is verified against ca.crt, and tls.crt/tls.key are presented as the client certificate. It errors
// when a key is missing or holds no valid PEM.
func TLSConfigFromSecretData(data map[string][]byte) (*tls.Config, error) {
	for _, key := range []string{TLSSecretCAKey, TLSSecretCertKey, TLSSecretKeyKey} {
		if len(data[key]) == 0 {
			return nil, fmt.Errorf("client TLS secret has no %q", key)
		}
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(data[TLSSecretCAKey]) {
		return nil, errors.New("client TLS secret: no PEM certificate in " + TLSSecretCAKey)
	}
	cert, err := tls.X509KeyPair(data[TLSSecretCertKey], data[TLSSecretKeyKey])
	if err != nil {
		return nil, fmt.Errorf("client TLS secret: %s/%s: %w", TLSSecretCertKey, TLSSecretKeyKey, err)
	}
	return &tls.Config{
		RootCAs:      roots,
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
	}, nil
}
