//go:build integration

package backup

import (
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
)

// TestS3SlowMidBackupCompletes: the Backup's S3 endpoint is a loopback proxy
// that holds every chunk the client sends for 300 ms before versitygw gets
// it; the backup Job's command still succeeds, the Backup is Complete with
// its data in S3, it was never Failed (watched throughout) and it has one Job.
func TestS3SlowMidBackupCompletes(t *testing.T) {
	f := newJobFixture(t)
	ctx := f.env.Ctx
	proxy := startSlowProxy(t, f.srv.addr, 300*time.Millisecond)
	jobs := f.watchJobs(t, "app.kubernetes.io/component=backup,tidb.pingcap.com/backup=slow")
	failed := f.watchFailed(t, "slow")
	sp := f.srv.provider("cluster-a/slow")
	sp.S3.Endpoint = proxy.endpoint()
	f.createBackup(t, "slow", sp, func(b *v1alpha1.Backup) { b.Spec.ServiceAccount = noPodAccount })
	job := f.waitJob(t, "backup-slow")
	start := time.Now()
	if code, out := f.runJob(t, job); code != 0 {
		t.Fatalf("the backup Job through the slow proxy exited %d:\n%s", code, out)
	}
	took := time.Since(start)
	b := f.backup(t, "slow")
	objs := f.srv.list(t, ctx, "cluster-a/slow/")
	var sum int64
	for _, s := range objs {
		sum += s
	}
	if !condition.IsBackupComplete(b) || len(objs) != 4 || b.Status.BackupSize != sum || sum != dataSize(3)+metaSize {
		t.Fatalf("after the slow backup: status %+v; bucket %v (sum %d), want Complete with 3 data files and the backupmeta", b.Status, objs, sum)
	}
	if n := proxy.delayed.Load(); n < 5 || took < time.Duration(n)*300*time.Millisecond/2 {
		t.Errorf("the proxy held %d chunks in a %s run: the backup did not go through it slowly", n, took)
	}
	t.Logf("the proxy held %d chunks; the backup-manager ran %s", proxy.delayed.Load(), took)
	if seen := failed(); seen != "" {
		t.Errorf("the Backup was Failed in between: %s", seen)
	}
	if uids := jobs(); len(uids) != 1 || uids[0] != job.UID {
		t.Errorf("backup Jobs %v, want only %s", uids, job.UID)
	}
}

// watchFailed watches Backup name from now on and returns a function that
// stops the watch and returns the first True Failed condition it saw ("" for none).
func (f *jobFixture) watchFailed(t *testing.T, name string) func() string {
	t.Helper()
	w, err := f.client.PingcapV1alpha1().Backups(f.env.Namespace).Watch(f.env.Ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			b, ok := ev.Object.(*v1alpha1.Backup)
			if !ok || !condition.IsBackupFailed(b) {
				continue
			}
			mu.Lock()
			if seen == "" {
				fc := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed)
				seen = fc.Reason + ": " + fc.Message
			}
			mu.Unlock()
		}
	}()
	var once sync.Once
	stop := func() string {
		once.Do(w.Stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
	t.Cleanup(func() { stop() })
	return stop
}
