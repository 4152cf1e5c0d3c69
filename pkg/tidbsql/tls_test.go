package tidbsql

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/tidbsql/tidbsqltest"
)

// TestTLSConfigFromSecretData: the CA is required unless skipCA, which
// verifies nothing (and ignores a CA given); the client key pair is used
// when present and must be valid.
func TestTLSConfigFromSecretData(t *testing.T) {
	t.Parallel()
	cert, key := tidbsqltest.SelfSigned(t)
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
