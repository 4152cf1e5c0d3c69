package tidbsql

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// testPKI is a CA with a server certificate for tc's TiDB Service name and
// a client certificate, as PEM: what a cluster's TLS Secrets hold.
type testPKI struct {
	caCert, serverCert, serverKey, clientCert, clientKey []byte
}

func newTestPKI(serverName string) (*testPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leaf := func(serial int64, usage x509.ExtKeyUsage, dns []string) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: fmt.Sprint("leaf", serial)},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), DNSNames: dns,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
	}
	p := &testPKI{caCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	if p.serverCert, p.serverKey, err = leaf(2, x509.ExtKeyUsageServerAuth, []string{serverName}); err != nil {
		return nil, err
	}
	if p.clientCert, p.clientKey, err = leaf(3, x509.ExtKeyUsageClientAuth, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// serverArgs writes the server's files into dir and returns mariadbd's TLS flags.
func (p *testPKI) serverArgs(dir string) ([]string, error) {
	files := map[string][]byte{"ca.pem": p.caCert, "server.pem": p.serverCert, "server-key.pem": p.serverKey}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	return []string{"--ssl-ca=" + filepath.Join(dir, "ca.pem"), "--ssl-cert=" + filepath.Join(dir, "server.pem"),
		"--ssl-key=" + filepath.Join(dir, "server-key.pem")}, nil
}

// secretData is the client Secret <tc>-tidb-client-secret.
func (p *testPKI) secretData() map[string][]byte {
	return map[string][]byte{SecretCAKey: p.caCert, SecretCertKey: p.clientCert, SecretKeyKey: p.clientKey}
}
