package manager

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
)

// s3Compact is CompactBackup ns/b1 of an S3 log backup.
func s3Compact() *v1alpha1.CompactBackup {
	return &v1alpha1.CompactBackup{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: "ns"}, Spec: v1alpha1.CompactSpec{
		StartTs: "450000000000000000", EndTs: "450000000000009999", Concurrency: 8,
		StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
			Provider: "ceph", Bucket: "bk", Prefix: "log", Region: "r1", Endpoint: "http://127.0.0.1:9000"}},
		BR: &v1alpha1.BRConfig{Cluster: "basic"}}}
}

func getCompact(t *testing.T, m *Manager) *v1alpha1.CompactBackup {
	t.Helper()
	cb, err := m.Client.PingcapV1alpha1().CompactBackups("ns").Get(t.Context(), "b1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cb
}

// compactTools are a fake br printing a base64 backend and a fake tikv-ctl
// writing stderrLines to stderr and exiting with exit; both record their
// arguments in the returned file.
func compactTools(t *testing.T, stderrLines []string, exit int) (string, string, string) {
	t.Helper()
	args := filepath.Join(t.TempDir(), "args")
	br := script(t, `echo "br $*" >> `+args+`; echo "  QkFTRTY0  "`)
	var body strings.Builder
	body.WriteString(`echo "tikv-ctl $*" >> ` + args + "\n")
	for _, l := range stderrLines {
		body.WriteString("echo '" + l + "' >&2\n")
	}
	body.WriteString("exit " + string(rune('0'+exit)))
	return br, script(t, body.String()), args
}

// TestCompactCompletes: base64ify gets the storage URL and provider flags,
// tikv-ctl the backend, range and concurrency; the status ends Complete
// with the last progress and the greatest input_max_ts.
func TestCompactCompletes(t *testing.T) {
	t.Parallel()
	br, ctl, argsFile := compactTools(t, []string{
		`{"level":"INFO","message":"Spawning compaction.","input_max_ts":450000000000000100}`,
		`{"level":"INFO","message":"Finishing compaction.","meta_completed":1,"meta_total":2,"bytes_to_compact":100,"bytes_compacted":40}`,
		`{"level":"INFO","message":"Spawning compaction.","input_max_ts":450000000000000300}`,
		`{"level":"INFO","message":"Spawning compaction.","input_max_ts":450000000000000200}`,
		`{"level":"INFO","message":"Finishing compaction.","meta_completed":2,"meta_total":2,"bytes_to_compact":100,"bytes_compacted":100}`,
	}, 0)
	m, out := newTestManager(t, newFakeBucket(nil), br, s3Compact())
	m.Opts.TiKVCtlPath = ctl
	if err := m.Compact(t.Context()); err != nil {
		t.Fatalf("Compact: %v\n%s", err, out)
	}
	st := getCompact(t, m).Status
	if st.State != v1alpha1.CompactComplete || st.Progress != "[READ_META(2/2),COMPACT_WORK(100/100)]" || st.EndTs != "450000000000000300" {
		t.Fatalf("status %+v", st)
	}
	b, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	want := "br operator base64ify --storage=s3://bk/log --s3.region=r1 --s3.endpoint=http://127.0.0.1:9000 --s3.provider=ceph\n" +
		"tikv-ctl --log-level INFO --log-format json compact-log-backup --storage-base64 QkFTRTY0 --from 450000000000000000 " +
		"--until 450000000000009999 -N 8\n"
	if string(b) != want {
		t.Fatalf("tool args:\n%s\nwant:\n%s", b, want)
	}
	if !strings.Contains(out.String(), "Spawning compaction.") {
		t.Errorf("tikv-ctl's log is not tee'd to the output:\n%s", out)
	}
}

// TestCompactFailures: an abort, an undecodable line and a non-zero exit
// each end RetryFailed with the error and one retry record.
func TestCompactFailures(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		lines []string
		exit  int
		want  string
	}{
		"aborted": {[]string{`{"level":"ERROR","message":"Compaction aborted.","err":"failed to read meta: NoSuchKey"}`}, 1,
			"compaction aborted: failed to read meta: NoSuchKey"},
		"garbage":   {[]string{`[2026/01/01] [INFO] not json`}, 0, "failed to decode raw log line"},
		"exit code": {nil, 3, "exited: exit status 3"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			br, ctl, _ := compactTools(t, tc.lines, tc.exit)
			m, out := newTestManager(t, newFakeBucket(nil), br, s3Compact())
			m.Opts.TiKVCtlPath = ctl
			err := m.Compact(t.Context())
			st := getCompact(t, m).Status
			if err == nil || !strings.Contains(err.Error(), tc.want) || st.State != v1alpha1.CompactRetryFailed ||
				!strings.Contains(st.Message, tc.want) || len(st.BackoffRetryStatus) != 1 {
				t.Fatalf("err %v status %+v, want RetryFailed with %q\n%s", err, st, tc.want, out)
			}
		})
	}
}

// TestCompactBadRange fails before running any tool.
func TestCompactBadRange(t *testing.T) {
	t.Parallel()
	cb := s3Compact()
	cb.Spec.EndTs = "1"
	m, _ := newTestManager(t, newFakeBucket(nil), "/nonexistent/br", cb)
	if err := m.Compact(t.Context()); err == nil || !strings.Contains(err.Error(), "must be greater than from-ts") {
		t.Fatalf("err %v", err)
	}
}

func TestProgressString(t *testing.T) {
	t.Parallel()
	p := compactProgress{MetaCompleted: 3, MetaTotal: 4, BytesToCompact: 10, BytesCompacted: 7}
	if got := p.String(); got != "[READ_META(3/4),COMPACT_WORK(7/10)]" {
		t.Fatalf("%s", got)
	}
}

// TestCompactProgressDebounced: with a clock that stands still, of three
// progress lines only the first is written while tikv-ctl runs; the last
// is written at the end, then Complete.
func TestCompactProgressDebounced(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := 1; i <= 3; i++ {
		lines = append(lines, `{"message":"Finishing compaction.","meta_completed":`+string(rune('0'+i))+
			`,"meta_total":3,"bytes_to_compact":30,"bytes_compacted":10}`)
	}
	br, ctl, _ := compactTools(t, lines, 0)
	m, out := newTestManager(t, newFakeBucket(nil), br, s3Compact())
	m.Opts.TiKVCtlPath = ctl
	m.Now = func() time.Time { return clock }
	client := m.Client.(*fake.Clientset)
	if err := m.Compact(t.Context()); err != nil {
		t.Fatalf("Compact: %v\n%s", err, out)
	}
	var progress []string
	for _, a := range client.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			progress = append(progress, u.GetObject().(*v1alpha1.CompactBackup).Status.Progress)
		}
	}
	// Running, the first progress, the last progress at the end, Complete.
	want := []string{"", "[READ_META(1/3),COMPACT_WORK(10/30)]", "[READ_META(3/3),COMPACT_WORK(10/30)]", "[READ_META(3/3),COMPACT_WORK(10/30)]"}
	if !slices.Equal(progress, want) {
		t.Fatalf("progress written %q, want %q", progress, want)
	}
}
