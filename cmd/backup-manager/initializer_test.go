package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
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
