package command

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

var (
	s3Full = v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "ceph", Region: "r1", Bucket: "bk", Prefix: "p",
		Endpoint: "http://ceph:80", StorageClass: "STANDARD_IA", Acl: "private", SSE: "aws:kms", ForcePathStyle: ptr.To(true)}}
	gcsFull = v1alpha1.StorageProvider{Gcs: &v1alpha1.GcsStorageProvider{ProjectId: "proj", Bucket: "g", Prefix: "p",
		StorageClass: "NEARLINE", ObjectAcl: "private"}}
	azFull = v1alpha1.StorageProvider{Azblob: &v1alpha1.AzblobStorageProvider{Container: "c", Prefix: "p",
		StorageAccount: "acct", AccessTier: "Cool", SasToken: "tok"}}
	local = v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{Prefix: "p",
		VolumeMount: corev1.VolumeMount{MountPath: "/nfs"}}}
)

func loc(t *testing.T, sp v1alpha1.StorageProvider) storage.Location {
	t.Helper()
	l, err := storage.LocationOf(sp)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func backupOf(sp v1alpha1.StorageProvider, mutate func(*v1alpha1.Backup)) *v1alpha1.Backup {
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "bk1", Namespace: "ns"},
		Spec: v1alpha1.BackupSpec{StorageProvider: sp, BR: &v1alpha1.BRConfig{Cluster: "basic"}}}
	if mutate != nil {
		mutate(b)
	}
	return b
}

func TestBRBackup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    *v1alpha1.Backup
		tls  bool
		want string
	}{{
		name: "s3 with every option",
		b:    backupOf(s3Full, nil),
		want: "backup full --pd=basic-pd.ns:2379 --storage=s3://bk/p?force-path-style=true --s3.region=r1 --s3.endpoint=http://ceph:80 --s3.provider=ceph --s3.acl=private --s3.storage-class=STANDARD_IA --s3.sse=aws:kms",
	}, {
		name: "gcs",
		b:    backupOf(gcsFull, nil),
		want: "backup full --pd=basic-pd.ns:2379 --storage=gcs://g/p --gcs.storage-class=NEARLINE --gcs.predefined-acl=private",
	}, {
		name: "azure",
		b:    backupOf(azFull, nil),
		want: "backup full --pd=basic-pd.ns:2379 --storage=azure://c/p --azblob.account-name=acct --azblob.access-tier=Cool --azblob.sas-token=tok",
	}, {
		name: "local, db backup, cluster in another namespace, TLS",
		b: backupOf(local, func(b *v1alpha1.Backup) {
			b.Spec.BackupType = v1alpha1.BackupTypeDB
			b.Spec.BR.DB = "shop"
			b.Spec.BR.ClusterNamespace = "tidb"
		}),
		tls:  true,
		want: "backup db --pd=basic-pd.tidb:2379 --ca=/var/lib/cluster-client-tls/ca.crt --cert=/var/lib/cluster-client-tls/tls.crt --key=/var/lib/cluster-client-tls/tls.key --storage=local:///nfs/p --db=shop",
	}, {
		name: "table backup with every br option, filters and extra options",
		b: backupOf(local, func(b *v1alpha1.Backup) {
			b.Spec.BackupType = v1alpha1.BackupTypeTable
			b.Spec.TableFilter = []string{"shop.*", "!shop.tmp"}
			b.Spec.BR = &v1alpha1.BRConfig{Cluster: "basic", DB: "shop", Table: "orders", Concurrency: ptr.To[uint32](8),
				RateLimit: ptr.To[uint](100), Checksum: ptr.To(false), SendCredToTikv: ptr.To(true), CheckRequirements: ptr.To(false),
				LogLevel: "debug", StatusAddr: ":8286", TimeAgo: "10m", Options: []string{"--lastbackupts=42"}}
		}),
		want: "backup table --pd=basic-pd.ns:2379 --storage=local:///nfs/p --db=shop --table=orders --concurrency=8 --ratelimit=100 --checksum=false --send-credentials-to-tikv=true --check-requirements=false --log-level=debug --status-addr=:8286 --timeago=10m --filter=shop.* --filter=!shop.tmp --lastbackupts=42",
	}, {
		name: "raw",
		b:    backupOf(local, func(b *v1alpha1.Backup) { b.Spec.BackupType = v1alpha1.BackupTypeRaw }),
		want: "backup raw --pd=basic-pd.ns:2379 --storage=local:///nfs/p",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := BRBackup(tc.b, loc(t, tc.b.Spec.StorageProvider), tc.tls)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(strings.Fields(tc.want), got); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
		})
	}
	if _, err := BRBackup(&v1alpha1.Backup{}, loc(t, local), false); err == nil {
		t.Error("a backup without spec.br built a command")
	}
}

func TestBRLog(t *testing.T) {
	t.Parallel()
	b := backupOf(s3Full, func(b *v1alpha1.Backup) {
		b.Spec.BackupMode = v1alpha1.BackupModeLog
		b.Spec.CommitTs = "400"
		b.Spec.LogTruncateUntil = "500"
	})
	l := loc(t, b.Spec.StorageProvider)
	s3 := " --s3.region=r1 --s3.endpoint=http://ceph:80 --s3.provider=ceph --s3.acl=private --s3.storage-class=STANDARD_IA --s3.sse=aws:kms"
	for sub, want := range map[string]string{
		"log-start":    "log start --task-name=bk1 --pd=basic-pd.ns:2379 --storage=s3://bk/p?force-path-style=true" + s3 + " --start-ts=400",
		"log-stop":     "log stop --task-name=bk1 --pd=basic-pd.ns:2379",
		"log-pause":    "log pause --task-name=bk1 --pd=basic-pd.ns:2379",
		"log-resume":   "log resume --task-name=bk1 --pd=basic-pd.ns:2379",
		"log-status":   "log status --task-name=bk1 --json --pd=basic-pd.ns:2379",
		"log-truncate": "log truncate --until=500 --storage=s3://bk/p?force-path-style=true" + s3 + " --yes",
	} {
		got, err := BRLog(b, l, false, sub)
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		if d := cmp.Diff(strings.Fields(want), got); d != "" {
			t.Errorf("%s args (-want +got):\n%s", sub, d)
		}
	}
	if _, err := BRLog(b, l, false, "log-unknown"); err == nil {
		t.Error("an unknown subcommand built a command")
	}
	b.Spec.LogTruncateUntil = ""
	if _, err := BRLog(b, l, false, "log-truncate"); err == nil {
		t.Error("log-truncate without logTruncateUntil built a command")
	}
}

func TestBRRestore(t *testing.T) {
	t.Parallel()
	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec: v1alpha1.RestoreSpec{StorageProvider: gcsFull, BR: &v1alpha1.BRConfig{Cluster: "tgt", OnLine: ptr.To(true)}}}
	got, err := BRRestore(r, loc(t, r.Spec.StorageProvider), false)
	if err != nil {
		t.Fatal(err)
	}
	want := "restore full --pd=tgt-pd.ns:2379 --storage=gcs://g/p --gcs.storage-class=NEARLINE --gcs.predefined-acl=private --online=true"
	if d := cmp.Diff(strings.Fields(want), got); d != "" {
		t.Errorf("snapshot restore (-want +got):\n%s", d)
	}

	pitr := r.DeepCopy()
	pitr.Spec.Mode = v1alpha1.RestoreModePiTR
	pitr.Spec.StorageProvider = local
	pitr.Spec.PitrRestoredTs = "2026-01-01 00:00:00+0000"
	pitr.Spec.LogRestoreStartTs = "300"
	pitr.Spec.PitrFullBackupStorageProvider = s3Full
	got, err = BRRestore(pitr, loc(t, local), true)
	if err != nil {
		t.Fatal(err)
	}
	wantPitr := []string{"restore", "point", "--pd=tgt-pd.ns:2379", "--ca=/var/lib/cluster-client-tls/ca.crt",
		"--cert=/var/lib/cluster-client-tls/tls.crt", "--key=/var/lib/cluster-client-tls/tls.key", "--storage=local:///nfs/p",
		"--full-backup-storage=s3://bk/p?force-path-style=true", "--restored-ts=2026-01-01 00:00:00+0000", "--start-ts=300", "--online=true"}
	if d := cmp.Diff(wantPitr, got); d != "" {
		t.Errorf("pitr restore (-want +got):\n%s", d)
	}
	pitr.Spec.PitrFullBackupStorageProvider = v1alpha1.StorageProvider{}
	if _, err := BRRestore(pitr, loc(t, local), false); err == nil {
		t.Error("a PiTR restore without its full backup storage built a command")
	}
}

func TestDumplingAndLightning(t *testing.T) {
	t.Parallel()
	b := backupOf(s3Full, func(b *v1alpha1.Backup) {
		b.Spec.BR = nil
		b.Spec.From = &v1alpha1.TiDBAccessConfig{Host: "basic-tidb", SecretName: "s"}
		b.Spec.Dumpling = &v1alpha1.DumplingConfig{TableFilter: []string{"old.*"}, Options: []string{"--threads=4"}}
	})
	got, err := Dumpling(b, loc(t, s3Full), Login{Access: *b.Spec.From, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	want := "--host=basic-tidb --port=4000 --user=root --password=pw --output=s3://bk/p?force-path-style=true --s3.region=r1 --s3.endpoint=http://ceph:80 --s3.provider=ceph --s3.acl=private --s3.storage-class=STANDARD_IA --s3.sse=aws:kms --filter=old.* --threads=4"
	if d := cmp.Diff(strings.Fields(want), got); d != "" {
		t.Errorf("dumpling (-want +got):\n%s", d)
	}
	if red := Redact(got); red[3] != "--password=******" || red[0] != got[0] {
		t.Errorf("Redact = %v", red)
	}
	if _, err := Dumpling(backupOf(local, nil), loc(t, local), Login{}); err == nil {
		t.Error("an export without spec.from built a command")
	}

	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Spec: v1alpha1.RestoreSpec{
		StorageProvider: s3Full, To: &v1alpha1.TiDBAccessConfig{Host: "h", Port: 4001, User: "u", SecretName: "s"},
		TableFilter: []string{"a.*"}}}
	got, err = Lightning(r, loc(t, s3Full), Login{Access: *r.Spec.To, Password: "pw", ClientTLS: true})
	if err != nil {
		t.Fatal(err)
	}
	wantL := []string{"--backend=tidb", "--tidb-host=h", "--tidb-port=4001", "--tidb-user=u", "--tidb-password=pw",
		"--ca=/var/lib/tidb-client-tls/ca.crt", "--cert=/var/lib/tidb-client-tls/tls.crt", "--key=/var/lib/tidb-client-tls/tls.key",
		"-d=s3://bk/p?acl=private&endpoint=http%3A%2F%2Fceph%3A80&force-path-style=true&provider=ceph&region=r1&sse=aws%3Akms&storage-class=STANDARD_IA",
		"--check-requirements=false", "--filter=a.*"}
	if d := cmp.Diff(wantL, got); d != "" {
		t.Errorf("lightning (-want +got):\n%s", d)
	}
	if got := StorageURLWithOptions(loc(t, local)); got != "local:///nfs/p" {
		t.Errorf("local URL with options = %q", got)
	}
	if got := StorageURLWithOptions(loc(t, azFull)); got != "azure://c/p?access-tier=Cool&account-name=acct" {
		t.Errorf("azure URL with options = %q", got)
	}
}
