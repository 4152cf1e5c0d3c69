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

// TestTLSConfigFromSecretData: the CA is required unless skipCA, which
// verifies nothing (and ignores a CA given); the client key pair is used
// when present and must be valid.
func TestTLSConfigFromSecretData(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	cases := []struct {
		name      string
		data      map[string][]byte
		skipCA    bool
		wantErr   bool
		wantCerts int
	}{
		{"no CA", map[string][]byte{SecretCertKey: cert, SecretKeyKey: key}, false, true, 0},
		{"CA not PEM", map[string][]byte{SecretCAKey: []byte("x")}, false, true, 0},
		{"CA only (disableClientAuthn)", map[string][]byte{SecretCAKey: cert}, false, false, 0},
		{"CA and key pair", map[string][]byte{SecretCAKey: cert, SecretCertKey: cert, SecretKeyKey: key}, false, false, 1},
		{"cert without key", map[string][]byte{SecretCAKey: cert, SecretCertKey: cert}, false, true, 0},
		{"skipCA: no CA needed", map[string][]byte{SecretCertKey: cert, SecretKeyKey: key}, true, false, 1},
		{"skipCA: a bad CA is not read", map[string][]byte{SecretCAKey: []byte("x")}, true, false, 0},
		{"skipCA: the key pair must still be valid", map[string][]byte{SecretCertKey: cert}, true, true, 0},
	}
	for _, tc := range cases {
		cfg, err := TLSConfigFromSecretData(tc.data, tc.skipCA)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v, wantErr %v", tc.name, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if len(cfg.Certificates) != tc.wantCerts {
			t.Errorf("%s: %d certificates, want %d", tc.name, len(cfg.Certificates), tc.wantCerts)
		}
		if cfg.InsecureSkipVerify != tc.skipCA || (cfg.RootCAs == nil) != tc.skipCA {
			t.Errorf("%s: InsecureSkipVerify %v, roots %v; skipCA %v", tc.name, cfg.InsecureSkipVerify, cfg.RootCAs != nil, tc.skipCA)
		}
	}
}
