//go:build integration

package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// pd is a PD that satisfies every rule, for specs about something else.
const pd = "pd: {replicas: 1, requests: {storage: 1Gi}}"

// tcYAML is a TidbCluster named name whose spec is the flow mapping body spec.
func tcYAML(name, spec string) string {
	return "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: " + name + "}\nspec: {" + spec + "}\n"
}

// objYAML is an object of kind named name whose spec is the flow mapping body spec.
func objYAML(kind, name, spec string) string {
	return "apiVersion: pingcap.com/v1alpha1\nkind: " + kind + "\nmetadata: {name: " + name + "}\nspec: {" + spec + "}\n"
}

// nameOf is a valid name of n characters.
func nameOf(n int) string { return "a" + strings.Repeat("b", n-1) }

// manyLabels is a flow mapping of n distinct labels.
func manyLabels(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "l%d: v, ", i)
	}
	return "{" + strings.TrimSuffix(b.String(), ", ") + "}"
}

// longPrefix is a DNS subdomain of exactly 253 characters.
var longPrefix = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)

// applyManifest runs `kubectl apply -f` on manifest, as a user would.
func applyManifest(t *testing.T, manifest, namespace string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "obj.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := framework.KubectlErr("apply", "-f", path, "--namespace", namespace)
	return stderr, err
}

// badTidbClusters are TidbClusters the API server must refuse, with the
// field path and a part of the message its answer must contain.
var badTidbClusters = []struct {
	name, manifest, wantPath, wantMsg string
}{
	// metadata.name
	{"name too long for pd", tcYAML(nameOf(validation.MaxClusterNameWithPD+1), pd), "metadata", "at most 49 characters with spec.pd"},
	{"name too long for tiflash", tcYAML(nameOf(validation.MaxClusterNameWithTiFlash+1),
		pd+", tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 1Gi}}}]}"), "metadata", "at most 44 characters with spec.tiflash"},
	{"name too long for tiproxy", tcYAML(nameOf(validation.MaxClusterNameWithTiProxy+1), pd+", tiproxy: {replicas: 1}"),
		"metadata", "at most 44 characters with spec.tiproxy"},
	{"name too long for pdms scheduling", tcYAML(nameOf(validation.MaxClusterNameWithScheduling+1),
		pd+", pdms: [{name: scheduling, replicas: 1}]"), "metadata", "at most 41 characters with spec.pdms scheduling"},
	{"name too long for discovery across Kubernetes", tcYAML(nameOf(validation.MaxClusterNameWithDiscovery+1), "acrossK8s: true"),
		"metadata", "at most 53 characters with spec.acrossK8s"},
	{"name starts with a digit", tcYAML("1db", pd), "metadata", "DNS-1035 label"},
	{"name has a dot", tcYAML("db.prod", pd), "metadata", "DNS-1035 label"},

	// required data volumes
	{"pd without storage", tcYAML("db", "pd: {replicas: 1}"), "spec.pd.requests", "requests.storage is required"},
	{"tikv without storage", tcYAML("db", pd+", tikv: {replicas: 1, requests: {cpu: 1}}"), "spec.tikv.requests", "requests.storage is required"},
	{"pump without storage", tcYAML("db", pd+", pump: {replicas: 1}"), "spec.pump.requests", "requests.storage is required"},
	{"tiflash without disks", tcYAML("db", pd+", tiflash: {replicas: 1, storageClaims: []}"), "spec.tiflash.storageClaims", "at least 1 items"},
	{"tiflash disk without size", tcYAML("db", pd+", tiflash: {replicas: 1, storageClaims: [{storageClassName: ssd}]}"),
		"spec.tiflash.storageClaims[0].resources", "each TiFlash data disk needs a size"},

	// numbers
	{"tikv replicas over the ceiling", tcYAML("db", pd+", tikv: {replicas: 100000, requests: {storage: 1Gi}}"),
		"spec.tikv.replicas", "less than or equal to 1000"},
	{"pdms replicas over the ceiling", tcYAML("db", pd+", pdms: [{name: tso, replicas: 1001}]"), "spec.pdms[0].replicas", "less than or equal to 1000"},
	{"negative tidb replicas", tcYAML("db", pd+", tidb: {replicas: -1}"), "spec.tidb.replicas", "greater than or equal to 0"},
	{"maxFailoverCount over the ceiling", tcYAML("db", "pd: {replicas: 1, requests: {storage: 1Gi}, maxFailoverCount: 5000}"),
		"spec.pd.maxFailoverCount", "less than or equal to 1000"},
	{"scale-out parallelism over the ceiling", tcYAML("db", pd+", tikv: {replicas: 1, requests: {storage: 1Gi}, scalePolicy: {scaleOutParallelism: 1001}}"),
		"spec.tikv.scalePolicy.scaleOutParallelism", "less than or equal to 1000"},
	{"tidb service port 0", tcYAML("db", pd+", tidb: {replicas: 1, service: {port: 0}}"), "spec.tidb.service.port", "greater than or equal to 1"},
	{"probe timeout 0", tcYAML("db", pd+", tidb: {replicas: 1, customizedStartupProbe: {image: p, binaryName: p, timeoutSeconds: 0}}"),
		"spec.tidb.customizedStartupProbe.timeoutSeconds", "greater than or equal to 1"},

	// cross-field rules
	{"no PD for TiKV", tcYAML("db", "tikv: {replicas: 1, requests: {storage: 1Gi}}"), "spec.pd", "a PD is required"},
	{"PD scaled to 0 under TiDB", tcYAML("db", "pd: {replicas: 0, requests: {storage: 1Gi}}, tidb: {replicas: 2}"), "spec.pd.replicas", "strand"},
	{"pdAddresses without scheme", tcYAML("db", `tidb: {replicas: 1}, pdAddresses: ["pd.example:2379"]`), "spec.pdAddresses", "http:// or https://"},
	{"pdms listed twice", tcYAML("db", pd+", pdms: [{name: tso, replicas: 1}, {name: tso, replicas: 2}]"), "spec.pdms", "listed once"},

	// enums
	{"startScriptVersion", tcYAML("db", pd+", startScriptVersion: v3"), "spec.startScriptVersion", "Unsupported value"},
	{"component configUpdateStrategy", tcYAML("db", pd+", tidb: {replicas: 1, configUpdateStrategy: Sometimes}"),
		"spec.tidb.configUpdateStrategy", "Unsupported value"},
	{"service type", tcYAML("db", pd+", tidb: {replicas: 1, service: {type: Public}}"), "spec.tidb.service.type", "Unsupported value"},
	{"legacy service type", tcYAML("db", pd+", services: [{name: tidb, type: Public}]"), "spec.services[0].type", "Unsupported value"},
	{"pvReclaimPolicy", tcYAML("db", pd+", pvReclaimPolicy: Keep"), "spec.pvReclaimPolicy", "Unsupported value"},
	{"component imagePullPolicy", tcYAML("db", "pd: {replicas: 1, requests: {storage: 1Gi}, imagePullPolicy: Sometimes}"),
		"spec.pd.imagePullPolicy", "Unsupported value"},
	{"helper imagePullPolicy", tcYAML("db", pd+", helper: {imagePullPolicy: Sometimes}"), "spec.helper.imagePullPolicy", "Unsupported value"},
	{"dnsPolicy", tcYAML("db", pd+", dnsPolicy: ClusterLast"), "spec.dnsPolicy", "Unsupported value"},
	{"nodeAffinityPolicy", tcYAML("db", pd+", topologySpreadConstraints: [{topologyKey: zone, nodeAffinityPolicy: Maybe}]"),
		"spec.topologySpreadConstraints[0].nodeAffinityPolicy", "Unsupported value"},

	// labels and annotations
	{"label key with two slashes", tcYAML("db", pd+`, labels: {"a/b/c": x}`), "spec.labels", "label keys"},
	{"label key prefix over 253", tcYAML("db", pd+", labels: {"+longPrefix+"e/x: v}"), "spec.labels", "label keys"},
	{"label value with a blank", tcYAML("db", pd+`, labels: {team: "db team"}`), "spec.labels.team", "should match"},
	{"label value over 63", tcYAML("db", pd+", labels: {team: "+strings.Repeat("x", 64)+"}"), "spec.labels.team", "Too long"},
	{"too many labels", tcYAML("db", pd+", labels: "+manyLabels(65)), "spec.labels", "Too many"},
	{"component annotation key", tcYAML("db", pd+`, tidb: {replicas: 1, annotations: {"-bad": x}}`), "spec.tidb.annotations", "annotation keys"},
	{"service label value", tcYAML("db", pd+`, tidb: {replicas: 1, service: {labels: {tier: "a b"}}}`), "spec.tidb.service.labels.tier", "should match"},
	{"nodeSelector value", tcYAML("db", pd+`, nodeSelector: {zone: "a b"}`), "spec.nodeSelector.zone", "should match"},

	// strings with a format
	{"clusterDomain", tcYAML("db", pd+", clusterDomain: Cluster_Local"), "spec.clusterDomain", "should match"},
	{"timezone with a blank", tcYAML("db", pd+`, timezone: "Asia Shanghai"`), "spec.timezone", "should match"},
	{"evictLeaderTimeout", tcYAML("db", pd+`, tikv: {replicas: 1, requests: {storage: 1Gi}, evictLeaderTimeout: "10 minutes"}`),
		"spec.tikv.evictLeaderTimeout", "should match"},
	{"storage volume size", tcYAML("db", "pd: {replicas: 1, requests: {storage: 1Gi}, storageVolumes: [{name: log, storageSize: lots}]}"),
		"spec.pd.storageVolumes[0].storageSize", "should match"},
}

// badBackups are Backups, Restores and BackupSchedules the API server must refuse.
var badBackups = []struct {
	name, manifest, wantPath, wantMsg string
}{
	{"backup with two providers", objYAML("Backup", "b", "br: {cluster: db}, s3: {provider: aws, bucket: b}, gcs: {projectId: p}"),
		"spec", "at most one storage provider"},
	{"BR backup without provider", objYAML("Backup", "b", "br: {cluster: db}"), "spec", "BR backups need a storage provider"},
	{"s3 without bucket", objYAML("Backup", "b", "br: {cluster: db}, s3: {provider: aws}"), "spec.s3.bucket", "set bucket"},
	{"log subcommand of a snapshot", objYAML("Backup", "b", "br: {cluster: db}, s3: {provider: aws, bucket: b}, logSubcommand: log-start"),
		"spec.logSubcommand", "only log backups"},
	{"log backup without BR", objYAML("Backup", "b", "backupMode: log, from: {host: h, secretName: s}, s3: {provider: aws, bucket: b}"),
		"spec.br", "run BR"},
	{"dumpling backup without from", objYAML("Backup", "b", "s3: {provider: aws, bucket: b}"), "spec.from", "set from"},
	{"db backup without db", objYAML("Backup", "b", "backupType: db, br: {cluster: db}, s3: {provider: aws, bucket: b}"),
		"spec.br", "set br.db"},
	{"table backup without table", objYAML("Backup", "b", "backupType: table, br: {cluster: db, db: d}, s3: {provider: aws, bucket: b}"),
		"spec.br", "set br.table"},
	{"retry duration", objYAML("Backup", "b", `br: {cluster: db}, s3: {provider: aws, bucket: b}, backoffRetryPolicy: {minRetryDuration: "5 minutes"}`),
		"spec.backoffRetryPolicy.minRetryDuration", "should match"},
	{"TiDB port", objYAML("Backup", "b", "from: {host: h, secretName: s, port: 70000}, s3: {provider: aws, bucket: b}"),
		"spec.from.port", "less than or equal to 65535"},

	{"restore with two providers", objYAML("Restore", "r", "br: {cluster: db}, s3: {provider: aws, bucket: b}, local: {volume: {}, volumeMount: {}}"),
		"spec", "at most one storage provider"},
	{"PiTR full backup with two providers", objYAML("Restore", "r",
		"br: {cluster: db}, restoreMode: pitr, s3: {provider: aws, bucket: b}, pitrFullBackupStorageProvider: {s3: {provider: aws, bucket: b}, gcs: {projectId: p}}"),
		"spec.pitrFullBackupStorageProvider", "at most one storage provider"},
	{"BR restore without provider", objYAML("Restore", "r", "br: {cluster: db}"), "spec", "BR restores need a storage provider"},
	{"PiTR without BR", objYAML("Restore", "r", "restoreMode: pitr, to: {host: h, secretName: s}, s3: {provider: aws, bucket: b}"), "spec.br", "run BR"},
	{"lightning restore without to", objYAML("Restore", "r", "s3: {provider: aws, bucket: b}"), "spec.to", "set to"},

	{"schedule in words", objYAML("BackupSchedule", "s", `schedule: "every day", backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.schedule", "must be a cron schedule"},
	{"schedule hour 25", objYAML("BackupSchedule", "s", `schedule: "0 25 * * *", backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.schedule", "must be a cron schedule"},
	{"schedule with six fields", objYAML("BackupSchedule", "s", `schedule: "0 0 2 * * *", backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.schedule", "must be a cron schedule"},
	{"unknown descriptor", objYAML("BackupSchedule", "s", `schedule: "@fortnightly", backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.schedule", "must be a cron schedule"},
	{"maxReservedTime in days", objYAML("BackupSchedule", "s", `schedule: "@daily", maxReservedTime: 3d, backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.maxReservedTime", "positive Go duration"},
	{"maxReservedTime zero", objYAML("BackupSchedule", "s", `schedule: "@daily", maxReservedTime: 0s, backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.maxReservedTime", "positive Go duration"},
	{"compactInterval", objYAML("BackupSchedule", "s", `schedule: "@daily", compactInterval: soon, backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.compactInterval", "positive Go duration"},
	{"maxBackups 0", objYAML("BackupSchedule", "s", `schedule: "@daily", maxBackups: 0, backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`),
		"spec.maxBackups", "greater than or equal to 1"},
	{"template with two providers", objYAML("BackupSchedule", "s",
		`schedule: "@daily", backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}, gcs: {projectId: p}}`),
		"spec.backupTemplate", "at most one storage provider"},
	{"BR template without provider anywhere", objYAML("BackupSchedule", "s", `schedule: "@daily", backupTemplate: {br: {cluster: db}}`),
		"spec.backupTemplate", "BR backups need a storage provider"},
	{"log template without provider anywhere", objYAML("BackupSchedule", "s",
		`schedule: "@daily", backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}, logBackupTemplate: {backupMode: log, br: {cluster: db}}`),
		"spec.logBackupTemplate", "BR backups need a storage provider"},
	{"template log subcommand of a snapshot", objYAML("BackupSchedule", "s",
		`schedule: "@daily", backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}, logSubcommand: log-stop}`),
		"spec.backupTemplate.logSubcommand", "only log backups"},
}

// TestAdmissionRejectsBadObjects applies each bad object with `kubectl
// apply` and requires the API server to refuse it at once, naming the field.
func TestAdmissionRejectsBadObjects(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	all := append(badTidbClusters[:len(badTidbClusters):len(badTidbClusters)], badBackups...)
	for _, tt := range all {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stderr, err := applyManifest(t, tt.manifest, env.Namespace)
			if err == nil {
				t.Fatalf("the API server accepted:\n%s", tt.manifest)
			}
			if !strings.Contains(stderr, tt.wantPath+": ") || !strings.Contains(stderr, tt.wantMsg) {
				t.Fatalf("the answer does not name %s with %q:\n%s", tt.wantPath, tt.wantMsg, stderr)
			}
		})
	}
}

// goodObjects lie on the edges of the rules and must be accepted.
var goodObjects = []struct{ name, manifest string }{
	{"name at the limit of every component", tcYAML(nameOf(validation.MaxClusterNameWithTiFlash),
		pd+", tikv: {replicas: 1, requests: {storage: 1Gi}}, tidb: {replicas: 1}, ticdc: {replicas: 1}, tiproxy: {replicas: 1}"+
			", pump: {replicas: 1, requests: {storage: 1Gi}}, tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 1Gi}}}]}")},
	{"name at the pd limit", tcYAML(nameOf(validation.MaxClusterNameWithPD), pd)},
	{"name at the scheduling limit", tcYAML(nameOf(validation.MaxClusterNameWithScheduling), pd+", pdms: [{name: tso, replicas: 1}, {name: scheduling, replicas: 1}]")},
	{"name of 63 without components", tcYAML(nameOf(validation.MaxClusterNameLength), "")},
	{"replicas at the ceiling", tcYAML("ceiling", "pd: {replicas: 1000, requests: {storage: 1Gi}}, tikv: {replicas: 1000, requests: {storage: 1Gi}}"+
		", tidb: {replicas: 1000, scalePolicy: {scaleInParallelism: 1000}}")},
	{"PD at 0 with other components at 0", tcYAML("paused", "pd: {replicas: 0, requests: {storage: 1Gi}}, tikv: {replicas: 0, requests: {storage: 1Gi}}, tidb: {replicas: 0}")},
	{"PD at 0 with an external PD", tcYAML("external", `pd: {replicas: 0, requests: {storage: 1Gi}}, tidb: {replicas: 1}, pdAddresses: ["https://pd.example:2379"]`)},
	{"joining another cluster's PD", tcYAML("joiner", "cluster: {name: db, clusterDomain: cluster.local}, tikv: {replicas: 1, requests: {storage: 1Gi}}")},
	{"labels at the edges", tcYAML("labelled", pd+", labels: {"+longPrefix+"/"+strings.Repeat("n", 63)+": "+strings.Repeat("v", 63)+
		`, empty: ""}, annotations: {"example.com/a_b.c": "any value at all"}, nodeSelector: {kubernetes.io/os: linux}`+
		", tidb: {replicas: 1, labels: "+manyLabels(64)+", service: {type: NodePort, labels: {app.kubernetes.io/part-of: db}}}")},
	{"formats", tcYAML("formats", pd+`, timezone: Etc/GMT+8, clusterDomain: cluster.local, tikv: {replicas: 1, requests: {storage: 1Gi}, evictLeaderTimeout: 1500m}`+
		`, tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 100Gi}}}, {resources: {requests: {storage: "1e11"}}}]}`)},
	{"schedule with a zone", objYAML("BackupSchedule", "zoned", `schedule: "CRON_TZ=Asia/Shanghai 0 2 * * *", maxReservedTime: 72h, backupTemplate: {br: {cluster: db}, s3: {provider: aws, bucket: b}}`)},
	{"schedule with names and steps", objYAML("BackupSchedule", "named", `schedule: "*/15 0-6,22,23 ? JAN-jun mon-FRI", maxBackups: 1, backupTemplate: {br: {cluster: db}, gcs: {projectId: p}}`)},
	{"schedule every", objYAML("BackupSchedule", "every", `schedule: "@every 1h30m", compactInterval: 1h, backupTemplate: {br: {cluster: db}, azblob: {container: c}}`)},
	{"template inherits the schedule's provider and BR", objYAML("BackupSchedule", "inherits",
		`schedule: "@daily", br: {cluster: db}, s3: {provider: aws, bucket: b}, backupTemplate: {}, logBackupTemplate: {backupMode: log}`)},
	{"dumpling backup", objYAML("Backup", "dump", "from: {host: db-tidb, secretName: s, port: 4000}, s3: {provider: minio, path: s3://b/p}")},
	{"table backup", objYAML("Backup", "table", "backupType: table, br: {cluster: db, db: d, table: t}, local: {volume: {name: v}, volumeMount: {name: v, mountPath: /b}}")},
	{"PiTR restore", objYAML("Restore", "pitr", "restoreMode: pitr, br: {cluster: db}, s3: {provider: aws, bucket: b}, pitrFullBackupStorageProvider: {s3: {provider: aws, bucket: f}}")},
}

// TestAdmissionAcceptsEdges applies objects on the edges of the rules and
// requires the API server to store them.
func TestAdmissionAcceptsEdges(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	for _, tt := range goodObjects {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if stderr, err := applyManifest(t, tt.manifest, env.Namespace); err != nil {
				t.Fatalf("the API server refused:\n%s\n%v\n%s", tt.manifest, err, stderr)
			}
		})
	}
}
