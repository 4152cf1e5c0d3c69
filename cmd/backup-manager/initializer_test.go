package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/tidbsql/tidbsqltest"
)

func TestRunInitializerUsage(t *testing.T) {
	t.Setenv("INIT_SQL", "")
	absent := filepath.Join(t.TempDir(), "absent")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no host", []string{"tidb-initializer"}, 2, "--host is required"},
		{"stray argument", []string{"tidb-initializer", "--host=h", "x"}, 2, "no arguments are taken"},
		{"bad flag", []string{"tidb-initializer", "--nope"}, 2, "flag provided but not defined"},
		{"unreadable password dir", []string{"tidb-initializer", "--host=h", "--password-dir=" + absent}, 1, "password Secret directory"},
		{"unreadable SQL file", []string{"tidb-initializer", "--host=h", "--init-sql-file=" + absent}, 1, "init SQL file"},
		{"TLS dir without keys", []string{"tidb-initializer", "--host=h", "--tls-dir=" + t.TempDir()}, 1, "holds none of"},
		{"skip CA without a TLS dir", []string{"tidb-initializer", "--host=h", "--tls-skip-ca"}, 2, "--tls-skip-ca needs --tls-dir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Run(t.Context(), tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.want)
			}
		})
	}
}

// TestInitializerTLSSkipCA: a mounted client Secret without ca.crt is
// refused while TiDB's certificate is verified; with --tls-skip-ca the
// connection verifies nothing and still presents the client certificate.
func TestInitializerTLSSkipCA(t *testing.T) {
	dir := t.TempDir()
	cert, key := tidbsqltest.SelfSigned(t)
	for name, data := range map[string][]byte{"tls.crt": cert, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	verify := initializerOptions{host: "h", port: 4000, tlsDir: dir}
	if _, err := verify.resolve(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "ca.crt") {
		t.Errorf("verifying without ca.crt: %v, want an error naming ca.crt", err)
	}
	skip := verify
	skip.tlsSkipCA = true
	opts, err := skip.resolve(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c := opts.Target.TLS; c == nil || !c.InsecureSkipVerify || len(c.Certificates) != 1 {
		t.Errorf("TLS %+v, want unverified with the client certificate", c)
	}
}
