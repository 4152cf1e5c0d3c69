// Package manager is the backup-manager's work: it reads its Backup or
// Restore, runs BR (dumpling for exports, TiDB Lightning for imports) with
// the command line package command builds, streams the tool's output, reads
// BR's summary, sizes the backup from storage and writes the CR's status
// itself (Running, then Complete or Failed); `clean` deletes a backup's
// remote data in batches.
package manager

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// DefaultBRPath is where the Job's `br` init container copies BR.
const DefaultBRPath = "/var/lib/br-bin/br"

// Options are the backup-manager's flags.
type Options struct {
	// Namespace and Name of the Backup or Restore.
	Namespace, Name string
	// TiKVVersion is the cluster's TiKV version (informational).
	TiKVVersion string
	// Mode is "log" for a log backup, "pitr" for a PiTR restore.
	Mode string
	// Subcommand is the log backup command: log-start, log-stop, log-truncate.
	Subcommand string
	// ClusterTLS and ClientTLS say the Job mounts the cluster / TiDB client certificates.
	ClusterTLS, ClientTLS bool
	// SkipClientCA is the cluster's spec.tidb.tlsClient.skipInternalClientCA,
	// which BR Jobs pass with ClientTLS as the TiDB Operator v1's do. It
	// changes no command line: BR reaches PD and TiKV, never TiDB's MySQL
	// port, and exports and imports log in to spec.from/spec.to, which name
	// no cluster (their Jobs never pass it).
	SkipClientCA bool
	// BRPath, DumplingPath and LightningPath are the tools; empty picks the default.
	BRPath, DumplingPath, LightningPath string
	// TiKVCtlPath is tikv-ctl (compact); empty picks the default.
	TiKVCtlPath string
}

// Manager runs one backup-manager subcommand.
type Manager struct {
	// Client reads and writes the CR.
	Client versioned.Interface
	// Kube reads the TiDB password Secret of exports and imports.
	Kube kubernetes.Interface
	// Opts are the flags.
	Opts Options
	// Out receives the tools' output, line by line, and the manager's log.
	Out io.Writer
	// OpenBucket opens storage; storage.Open when nil.
	OpenBucket func(ctx context.Context, loc storage.Location) (storage.Bucket, error)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// now is the manager's clock.
func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// open opens loc's bucket.
func (m *Manager) open(ctx context.Context, loc storage.Location) (storage.Bucket, error) {
	if m.OpenBucket != nil {
		return m.OpenBucket(ctx, loc)
	}
	return storage.Open(ctx, loc)
}

// logf writes one line of the manager's own log.
func (m *Manager) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(m.Out, "[backup-manager] "+format+"\n", args...)
}

// brPath is --br-path, else the init container's copy when present, else br
// from PATH.
func (m *Manager) brPath() string {
	if m.Opts.BRPath != "" {
		return m.Opts.BRPath
	}
	if _, err := os.Stat(DefaultBRPath); err == nil {
		return DefaultBRPath
	}
	return "br"
}

// toolPath is path when set, else name (looked up on PATH when run).
func toolPath(path, name string) string {
	if path != "" {
		return path
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}
