package command

import (
	"fmt"
	"strconv"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// Target is the cluster BR talks to and how.
type Target struct {
	// Namespace of the CR; the cluster's when spec.br.clusterNamespace is empty.
	Namespace string
	// BR is the CR's spec.br.
	BR *v1alpha1.BRConfig
	// ClusterTLS adds BR's --ca/--cert/--key (the Job's --cluster-tls).
	ClusterTLS bool
}

// PDAddress is the cluster's PD service, <cluster>-pd.<namespace>:2379.
func (t Target) PDAddress() string {
	ns := t.BR.ClusterNamespace
	if ns == "" {
		ns = t.Namespace
	}
	return fmt.Sprintf("%s-pd.%s:2379", t.BR.Cluster, ns)
}

// common are the flags every BR command takes: --pd and the TLS flags.
func (t Target) common() []string {
	out := []string{"--pd=" + t.PDAddress()}
	if t.ClusterTLS {
		out = append(out, clusterTLSFlags()...)
	}
	return out
}

// brTuning are spec.br's tuning flags shared by backup and restore, in a
// fixed order: --db, --table, --concurrency, --ratelimit, --checksum,
// --send-credentials-to-tikv, --check-requirements, --log-level,
// --status-addr.
func brTuning(br *v1alpha1.BRConfig) []string {
	var out []string
	str := func(name, v string) {
		if v != "" {
			out = append(out, fmt.Sprintf("--%s=%s", name, v))
		}
	}
	boolean := func(name string, v *bool) {
		if v != nil {
			out = append(out, fmt.Sprintf("--%s=%t", name, *v))
		}
	}
	str("db", br.DB)
	str("table", br.Table)
	if br.Concurrency != nil {
		str("concurrency", strconv.FormatUint(uint64(*br.Concurrency), 10))
	}
	if br.RateLimit != nil {
		str("ratelimit", strconv.FormatUint(uint64(*br.RateLimit), 10))
	}
	boolean("checksum", br.Checksum)
	boolean("send-credentials-to-tikv", br.SendCredToTikv)
	boolean("check-requirements", br.CheckRequirements)
	str("log-level", br.LogLevel)
	str("status-addr", br.StatusAddr)
	return out
}

// filters are --filter flags, one a table filter rule.
func filters(rules []string) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		out = append(out, "--filter="+r)
	}
	return out
}

// backupType is the BR subcommand of t: full when empty.
func backupType(t v1alpha1.BackupType) string {
	if t == "" {
		return string(v1alpha1.BackupTypeFull)
	}
	return string(t)
}

// BRBackup is `br backup <full|db|table|raw> …` for a snapshot backup of b to
// loc. It errors for a backup without spec.br.
func BRBackup(b *v1alpha1.Backup, loc storage.Location, clusterTLS bool) ([]string, error) {
	br := b.Spec.BR
	if br == nil {
		return nil, fmt.Errorf("backup %s/%s has no spec.br", b.Namespace, b.Name)
	}
	t := Target{Namespace: b.Namespace, BR: br, ClusterTLS: clusterTLS}
	args := []string{"backup", backupType(b.Spec.BackupType)}
	args = append(args, t.common()...)
	args = append(args, "--storage="+StorageURL(loc))
	args = append(args, StorageFlags(loc)...)
	args = append(args, brTuning(br)...)
	if br.TimeAgo != "" {
		args = append(args, "--timeago="+br.TimeAgo)
	}
	args = append(args, filters(b.Spec.TableFilter)...)
	return append(args, br.Options...), nil
}

// BRLog is the `br log start|stop|pause|resume|status|truncate …` of a log
// backup's subcommand (log-start, log-stop, log-pause, log-resume,
// log-status, log-truncate); the task is named after the Backup. pause,
// resume and status reach the task through PD, as stop does; status asks
// for BR's JSON output.
// It errors for an unknown subcommand or a backup without spec.br.
func BRLog(b *v1alpha1.Backup, loc storage.Location, clusterTLS bool, subcommand string) ([]string, error) {
	br := b.Spec.BR
	if br == nil {
		return nil, fmt.Errorf("backup %s/%s has no spec.br", b.Namespace, b.Name)
	}
	t := Target{Namespace: b.Namespace, BR: br, ClusterTLS: clusterTLS}
	var args []string
	switch subcommand {
	case "log-start":
		args = append([]string{"log", "start", "--task-name=" + b.Name}, t.common()...)
		args = append(args, "--storage="+StorageURL(loc))
		args = append(args, StorageFlags(loc)...)
		if b.Spec.CommitTs != "" {
			args = append(args, "--start-ts="+b.Spec.CommitTs)
		}
	case "log-stop", "log-pause", "log-resume":
		args = append([]string{"log", subcommand[len("log-"):], "--task-name=" + b.Name}, t.common()...)
	case "log-status":
		args = append([]string{"log", "status", "--task-name=" + b.Name, "--json"}, t.common()...)
	case "log-truncate":
		if b.Spec.LogTruncateUntil == "" {
			return nil, fmt.Errorf("backup %s/%s: log-truncate needs spec.logTruncateUntil", b.Namespace, b.Name)
		}
		args = []string{"log", "truncate", "--until=" + b.Spec.LogTruncateUntil, "--storage=" + StorageURL(loc)}
		args = append(args, StorageFlags(loc)...)
		args = append(args, "--yes")
	default:
		return nil, fmt.Errorf("unknown log backup subcommand %q (want log-start, log-stop, log-pause, log-resume, log-status or log-truncate)", subcommand)
	}
	return append(args, br.Options...), nil
}

// BRRestore is `br restore <full|db|table|raw> …` from loc, or for PiTR
// (spec.restoreMode pitr) `br restore point --restored-ts=… --full-backup-storage=…`
// with loc holding the log backup. It errors for a restore without spec.br or a
// PiTR restore whose full backup storage cannot be read.
func BRRestore(r *v1alpha1.Restore, loc storage.Location, clusterTLS bool) ([]string, error) {
	br := r.Spec.BR
	if br == nil {
		return nil, fmt.Errorf("restore %s/%s has no spec.br", r.Namespace, r.Name)
	}
	t := Target{Namespace: r.Namespace, BR: br, ClusterTLS: clusterTLS}
	var args []string
	if r.Spec.Mode == v1alpha1.RestoreModePiTR {
		args = []string{"restore", "point"}
	} else {
		args = []string{"restore", backupType(r.Spec.BackupType)}
	}
	args = append(args, t.common()...)
	args = append(args, "--storage="+StorageURL(loc))
	args = append(args, StorageFlags(loc)...)
	if r.Spec.Mode == v1alpha1.RestoreModePiTR {
		full, err := storage.LocationOf(r.Spec.PitrFullBackupStorageProvider)
		if err != nil {
			return nil, fmt.Errorf("restore %s/%s: pitrFullBackupStorageProvider: %w", r.Namespace, r.Name, err)
		}
		args = append(args, "--full-backup-storage="+StorageURL(full))
		if r.Spec.PitrRestoredTs != "" {
			args = append(args, "--restored-ts="+r.Spec.PitrRestoredTs)
		}
		if r.Spec.LogRestoreStartTs != "" {
			args = append(args, "--start-ts="+r.Spec.LogRestoreStartTs)
		}
	}
	args = append(args, brTuning(br)...)
	if br.OnLine != nil {
		args = append(args, fmt.Sprintf("--online=%t", *br.OnLine))
	}
	args = append(args, filters(r.Spec.TableFilter)...)
	return append(args, br.Options...), nil
}
