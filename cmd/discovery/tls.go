package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TLS material is read once at start. A rotated certificate takes effect when
// the pod restarts.
// TODO: reload certificates when the mounted Secret changes.

// pdClientTLS is the client TLS config presented to PD when TC_TLS_ENABLED is
// true: the Secret <tc>-pd-cluster-secret mounted at --pd-tls-dir. It is nil
// (plain HTTP clients) otherwise.
func (o *options) pdClientTLS() (*tls.Config, error) {
	if !o.pdTLS {
		return nil, nil
	}
	data, err := readTLSDir(o.pdTLSDir)
	if err != nil {
		return nil, fmt.Errorf("%s is true: %w", envTLSEnabled, err)
	}
	cfg, err := pdapi.TLSConfigFromSecretData(data)
	if err != nil {
		return nil, fmt.Errorf("%s is true: %s: %w", envTLSEnabled, o.pdTLSDir, err)
	}
	return cfg, nil
}

// serverTLS is the mutual-TLS config of the discovery port when
// DISCOVERY_MTLS_ENABLED is true: the Secret <tc>-discovery-cluster-secret
// mounted at --discovery-tls-dir, with client certificates required and
// verified against its ca.crt. It is nil (plain HTTP) otherwise.
func (o *options) serverTLS() (*tls.Config, error) {
	if !o.serverMTLS {
		return nil, nil
	}
	data, err := readTLSDir(o.serverTLSDir)
	if err != nil {
		return nil, fmt.Errorf("%s is true: %w", envDiscoveryMTLS, err)
	}
	cert, err := tls.X509KeyPair(data[pdapi.TLSSecretCertKey], data[pdapi.TLSSecretKeyKey])
	if err != nil {
		return nil, fmt.Errorf("%s is true: %s: %w", envDiscoveryMTLS, o.serverTLSDir, err)
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(data[pdapi.TLSSecretCAKey]) {
		return nil, fmt.Errorf("%s is true: %s: no PEM certificate", envDiscoveryMTLS, filepath.Join(o.serverTLSDir, pdapi.TLSSecretCAKey))
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    clientCAs,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// readTLSDir reads ca.crt, tls.crt and tls.key from a mounted TLS Secret.
func readTLSDir(dir string) (map[string][]byte, error) {
	data := map[string][]byte{}
	var errs []error
	for _, key := range []string{pdapi.TLSSecretCAKey, pdapi.TLSSecretCertKey, pdapi.TLSSecretKeyKey} {
		b, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil {
			errs = append(errs, fmt.Errorf("read TLS material: %w", err))
			continue
		}
		data[key] = b
	}
	return data, errors.Join(errs...)
}
