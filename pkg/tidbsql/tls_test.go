package tidbsql

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// selfSigned returns a PEM certificate and key.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tidb"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
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

// TestTLSConfigFromSecretData: the CA is required; the client key pair is
// used when present and must be valid.
func TestTLSConfigFromSecretData(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	cases := []struct {
		name      string
		data      map[string][]byte
		wantErr   bool
		wantCerts int
	}{
		{"no CA", map[string][]byte{SecretCertKey: cert, SecretKeyKey: key}, true, 0},
		{"CA not PEM", map[string][]byte{SecretCAKey: []byte("x")}, true, 0},
		{"CA only (disableClientAuthn)", map[string][]byte{SecretCAKey: cert}, false, 0},
		{"CA and key pair", map[string][]byte{SecretCAKey: cert, SecretCertKey: cert, SecretKeyKey: key}, false, 1},
		{"cert without key", map[string][]byte{SecretCAKey: cert, SecretCertKey: cert}, true, 0},
	}
	for _, tc := range cases {
		cfg, err := TLSConfigFromSecretData(tc.data)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v, wantErr %v", tc.name, err, tc.wantErr)
			continue
		}
		if err == nil && (len(cfg.Certificates) != tc.wantCerts || cfg.RootCAs == nil) {
			t.Errorf("%s: %d certificates, roots %v", tc.name, len(cfg.Certificates), cfg.RootCAs != nil)
		}
	}
}
