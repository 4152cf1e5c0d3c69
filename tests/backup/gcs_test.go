//go:build integration

package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// gcsProject is the project the fake GCS bucket is created in and the
// Backups name as spec.gcs.projectId.
const gcsProject = "kubetidb-test"

var (
	gcsOnce sync.Once
	gcsPath string
	gcsErr  error
)

// gcsBinary builds fake-gcs-server with hack/s3-server.sh build-gcs (the Go
// module proxy, minutes on a cold cache, once) and returns its path.
func gcsBinary(t *testing.T) string {
	t.Helper()
	gcsOnce.Do(func() {
		cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "s3-server.sh"), "build-gcs")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if gcsErr = cmd.Run(); gcsErr != nil {
			gcsErr = fmt.Errorf("%w\n%s", gcsErr, stderr.String())
		}
		gcsPath = strings.TrimSpace(out.String())
	})
	if gcsErr != nil {
		t.Fatalf("building fake-gcs-server with hack/s3-server.sh build-gcs: %v", gcsErr)
	}
	return gcsPath
}

// gcsServer is one running fake-gcs-server with an in-memory backend.
type gcsServer struct {
	addr string // 127.0.0.1:<port>
}

// startGCS starts fake-gcs-server over plain HTTP on a free 127.0.0.1 port
// with an in-memory backend, creates the bucket, points this process's GCS
// clients at it (STORAGE_EMULATOR_HOST) and stops it at cleanup.
func startGCS(t *testing.T, ctx context.Context) *gcsServer {
	t.Helper()
	bin := gcsBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	_ = ln.Close()
	srv := &gcsServer{addr: addr.String()}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(addr.Port),
		"-backend", "memory", "-public-host", srv.addr, "-external-url", "http://"+srv.addr)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting fake-gcs-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("fake-gcs-server output:\n%s", logs.String())
		}
	})
	t.Setenv(storage.GCSEmulatorHostEnv, srv.addr)
	framework.WaitFor(t, ctx, 30*time.Second, "fake-gcs-server creates bucket "+bucket, func(ctx context.Context) (bool, error) {
		body := strings.NewReader(`{"name":"` + bucket + `"}`)
		code, _ := srv.do(ctx, http.MethodPost, "/storage/v1/b?project="+gcsProject, body)
		return code == http.StatusOK, nil
	})
	return srv
}

// env is what points a backup-manager (and the stand-in br it runs) at srv.
func (s *gcsServer) env() []string { return []string{storage.GCSEmulatorHostEnv + "=" + s.addr} }

// do sends one request to the server's JSON API and returns the status and body.
func (s *gcsServer) do(ctx context.Context, method, path string, body *strings.Reader) (int, []byte) {
	var rd = strings.NewReader("")
	if body != nil {
		rd = body
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+s.addr+path, rd)
	if err != nil {
		return 0, nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer func() { _ = resp.Body.Close() }()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// put uploads one object of size bytes.
func (s *gcsServer) put(t *testing.T, ctx context.Context, key string, size int) {
	t.Helper()
	path := "/upload/storage/v1/b/" + bucket + "/o?uploadType=media&name=" + url.QueryEscape(key)
	if code, body := s.do(ctx, http.MethodPost, path, strings.NewReader(strings.Repeat("x", size))); code != http.StatusOK {
		t.Fatalf("putting %s: %d %s", key, code, body)
	}
}

// list returns every object under prefix with its size, read from the
// server's JSON API (not through the storage package under test).
func (s *gcsServer) list(t *testing.T, ctx context.Context, prefix string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	token := ""
	for {
		path := "/storage/v1/b/" + bucket + "/o?prefix=" + url.QueryEscape(prefix) + "&pageToken=" + url.QueryEscape(token)
		code, body := s.do(ctx, http.MethodGet, path, nil)
		if code != http.StatusOK {
			t.Fatalf("listing %q: %d %s", prefix, code, body)
		}
		var page struct {
			Items []struct {
				Name string `json:"name"`
				Size string `json:"size"`
			} `json:"items"`
			NextPageToken string `json:"nextPageToken"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("listing %q: %v\n%s", prefix, err, body)
		}
		for _, o := range page.Items {
			n, _ := strconv.ParseInt(o.Size, 10, 64)
			out[o.Name] = n
		}
		if page.NextPageToken == "" {
			return out
		}
		token = page.NextPageToken
	}
}

// gcsProvider is the spec.gcs of a backup under prefix, with every option
// v1.6 passes on.
func gcsProvider(prefix string) v1alpha1.StorageProvider {
	return v1alpha1.StorageProvider{Gcs: &v1alpha1.GcsStorageProvider{
		ProjectId: gcsProject, Bucket: bucket, Prefix: prefix, SecretName: "gcs-secret",
		ObjectAcl: "bucketOwnerFullControl", BucketAcl: "private", Location: "us-west1", StorageClass: "NEARLINE",
	}}
}

// TestGCSBackupRestoreAndCleanThroughJobs runs a Backup to GCS
// (fake-gcs-server) through the controller's own Jobs: the backup Job's
// command line, run as its pod would, makes the stand-in br write into the
// bucket with the GCS options on its command line, and the Backup ends
// Complete at gcs://<bucket>/<prefix> with the size summed from the bucket,
// not Unsupported (the Job's env carries bucketAcl, location, objectAcl and
// storageClass under v1.6's names);
// a Restore from it completes; deleting the Backup (cleanPolicy Delete)
// gets the clean Job, which empties exactly its prefix.
func TestGCSBackupRestoreAndCleanThroughJobs(t *testing.T) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	gcs := startGCS(t, ctx)
	f.extraEnv = gcs.env()
	if _, err := f.env.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gcs-secret"},
		Data: map[string][]byte{"credentials": []byte(`{"type":"service_account","project_id":"` + gcsProject + `"}`)}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gcs.put(t, ctx, "cluster-a/gcs-10/keep.sst", 5)
	f.createBackup(t, "gcs", gcsProvider("cluster-a/gcs-1"), func(b *v1alpha1.Backup) {
		b.Spec.CleanPolicy = v1alpha1.CleanPolicyTypeDelete
	})

	job := f.waitJob(t, "backup-gcs")
	env := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["GCS_PROJECT_ID"] != gcsProject || env["GOOGLE_APPLICATION_CREDENTIALS"] == "" {
		t.Errorf("Job backup-gcs env %v lacks GCS_PROJECT_ID=%s and GOOGLE_APPLICATION_CREDENTIALS", env, gcsProject)
	}
	// v1.6's env of the bucket and object fields.
	for k, want := range map[string]string{"GCS_BUCKET_ACL": "private", "GCS_LOCATION": "us-west1",
		"GCS_OBJECT_ACL": "bucketOwnerFullControl", "GCS_STORAGE_CLASS": "NEARLINE"} {
		if env[k] != want {
			t.Errorf("Job backup-gcs env %s = %q, want %q", k, env[k], want)
		}
	}
	if code, out := f.runJob(t, job); code != 0 {
		t.Fatalf("Job backup-gcs's command exited %d:\n%s", code, out)
	}
	b := f.backup(t, "gcs")
	objs := gcs.list(t, ctx, "cluster-a/gcs-1/")
	var sum int64
	for _, s := range objs {
		sum += s
	}
	if !condition.IsBackupComplete(b) || b.Status.BackupPath != "gcs://backups/cluster-a/gcs-1" ||
		b.Status.BackupSize != dataSize(3)+metaSize || b.Status.BackupSize != sum || len(objs) != 4 ||
		objs["cluster-a/gcs-1/backupmeta"] != metaSize || b.Status.CommitTs != defaultTS {
		t.Fatalf("after the backup Job: status %+v; bucket %v (sum %d), want 3 data files and the backupmeta, %d bytes",
			b.Status, objs, sum, dataSize(3)+metaSize)
	}
	args := strings.Fields(f.brArgs(t)[0])
	for _, want := range []string{"backup", "full", "--storage=gcs://backups/cluster-a/gcs-1",
		"--gcs.storage-class=NEARLINE", "--gcs.predefined-acl=bucketOwnerFullControl"} {
		if !slices.Contains(args, want) {
			t.Errorf("br args %v lack %q", args, want)
		}
	}
	for _, c := range b.Status.Conditions {
		if string(c.Type) == "Unsupported" && c.Status == corev1.ConditionTrue {
			t.Errorf("the GCS Backup is Unsupported: %s", c.Message)
		}
	}

	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns},
		Spec: v1alpha1.RestoreSpec{StorageProvider: gcsProvider("cluster-a/gcs-1"), BR: &v1alpha1.BRConfig{Cluster: "basic"}}}
	if _, err := f.client.PingcapV1alpha1().Restores(ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, out := f.runJob(t, f.waitJob(t, "restore-rt")); code != 0 {
		t.Fatalf("Job restore-rt's command exited %d:\n%s", code, out)
	}
	if got := f.waitRestore(t, "the Restore is Complete", condition.IsRestoreComplete); got.Status.CommitTs != defaultTS {
		t.Errorf("Restore status %+v, want Complete with commitTs %s read back from GCS", got.Status, defaultTS)
	}
	all := f.brArgs(t)
	if last := all[len(all)-1]; !strings.HasPrefix(last, "restore full --pd=basic-pd."+ns+":2379 --storage=gcs://backups/cluster-a/gcs-1 ") {
		t.Errorf("br restore args %q", last)
	}

	if err := f.client.PingcapV1alpha1().Backups(ns).Delete(ctx, "gcs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, out := f.runJob(t, f.waitJob(t, "clean-gcs")); code != 0 {
		t.Fatalf("Job clean-gcs's command exited %d:\n%s", code, out)
	}
	if left := gcs.list(t, ctx, "cluster-a/gcs-1/"); len(left) != 0 {
		t.Errorf("clean left %v", left)
	}
	if kept := gcs.list(t, ctx, "cluster-a/gcs-10/"); len(kept) != 1 {
		t.Errorf("clean touched a sibling prefix: %v", kept)
	}
	f.waitBackup(t, "gcs", "the cleaned Backup loses its finalizer and is gone", func(b *v1alpha1.Backup) bool { return b == nil })
}
