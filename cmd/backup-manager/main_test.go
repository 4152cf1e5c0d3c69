package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunUsage(t *testing.T) {
	t.Setenv("NAMESPACE", "")
	missing := filepath.Join(t.TempDir(), "absent-kubeconfig")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", nil, 2, "usage: backup-manager"},
		{"unknown subcommand", []string{"defrag"}, 2, `unknown subcommand "defrag"`},
		{"compact wants resourceName", []string{"compact", "--namespace=ns", "--backupName=b"}, 2, "--resourceName are required"},
		{"bad flag", []string{"backup", "--nope"}, 2, "flag provided but not defined"},
		{"backup without its name", []string{"backup", "--namespace=ns"}, 2, "--namespace and --backupName are required"},
		{"restore wants restoreName", []string{"restore", "--namespace=ns", "--backupName=b"}, 2, "--restoreName are required"},
		{"unreadable kubeconfig", []string{"clean", "--namespace=ns", "--backupName=b", "--kubeconfig=" + missing}, 1, "loading the Kubernetes client configuration"},
		{"BR Job's TLS flags, v1's --skipClientCA included", []string{"backup", "--namespace=ns", "--backupName=b", "--cluster-tls",
			"--client-tls", "--skipClientCA=true", "--kubeconfig=" + missing}, 1, "loading the Kubernetes client configuration"},
		{"version", []string{"--version"}, 0, ""},
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
