//go:build integration

package backup

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// compactYAML is a CompactBackup as the TiDB Operator v1.6 documents it
// (name, maxRetryTimes, cluster namespace, extra spec lines, prefix and
// endpoint filled in); concurrency and maxRetryTimes as v1.6 spells them.
const compactYAML = `apiVersion: pingcap.com/v1alpha1
kind: CompactBackup
metadata:
  name: %s
spec:
  startTs: "2026-01-01 00:00:00"
  endTs: "2026-01-01 01:00:00"
  concurrency: 8
  maxRetryTimes: %d
  br:
    cluster: basic
    clusterNamespace: %s
    sendCredToTikv: true
%s  s3:
    provider: aws
    secretName: s3-secret
    region: us-east-1
    bucket: backups
    prefix: %s
    endpoint: %s
    forcePathStyle: true
`

// compactBackup reads CompactBackup name; nil when it is gone.
func (f *jobFixture) compactBackup(t *testing.T, name string) *v1alpha1.CompactBackup {
	t.Helper()
	cb, err := f.client.PingcapV1alpha1().CompactBackups(f.env.Namespace).Get(f.env.Ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading compactbackup %s: %v", name, err)
	}
	return cb
}

// waitCompact waits until CompactBackup name satisfies cond.
func (f *jobFixture) waitCompact(t *testing.T, name, desc string, cond func(*v1alpha1.CompactBackup) bool) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, jobTimeout, desc, func(ctx context.Context) (bool, error) {
		cb := f.compactBackup(t, name)
		if cb != nil {
			framework.Observef(ctx, "state %q message %q progress %q endTs %q", cb.Status.State, cb.Status.Message,
				cb.Status.Progress, cb.Status.EndTs)
		}
		return cond(cb), nil
	})
}

// putLogBackup writes a log backup's files under prefix: one meta and two
// data files of 100 and 200 bytes.
func (f *jobFixture) putLogBackup(t *testing.T, prefix string) {
	t.Helper()
	f.srv.put(t, f.env.Ctx, prefix+"/v1/backupmeta/0001.meta", 10)
	f.srv.put(t, f.env.Ctx, prefix+"/v1/20260101/00/1.log", 100)
	f.srv.put(t, f.env.Ctx, prefix+"/v1/20260101/00/2.log", 200)
}

// TestCompactBackupCompletesAndDeletionCleansUp applies the v1.6 YAML: the
// controller schedules it and creates Job <name> (backoffLimit =
// maxRetryTimes, OnFailure, `compact` with its name); that Job, run as its
// pod would with the stand-in br and tikv-ctl against the real S3 server,
// compacts the log files into compaction_out and leaves the CompactBackup
// Complete with v1.6's progress and the reached endTs. Deleting it deletes
// the Job (owner reference, garbage collector) and keeps the files.
func TestCompactBackupCompletesAndDeletionCleansUp(t *testing.T) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	f.putLogBackup(t, "cluster-a/log")
	framework.ApplyYAML(t, ctx, fmt.Sprintf(compactYAML, "demo1-compact-backup", 2, ns, "", "cluster-a/log", f.srv.endpoint), ns)

	job := f.waitJob(t, "demo1-compact-backup")
	c := job.Spec.Template.Spec
	if want := "compact --namespace=" + ns + " --resourceName=demo1-compact-backup"; strings.Join(c.Containers[0].Args, " ") != want ||
		*job.Spec.BackoffLimit != 2 || c.RestartPolicy != corev1.RestartPolicyOnFailure || len(c.InitContainers) != 2 ||
		c.InitContainers[0].Image != "pingcap/br:v8.5.0" || c.InitContainers[1].Image != "pingcap/tikv:v8.5.0" ||
		job.Labels["app.kubernetes.io/instance"] != "Compact-Backup" {
		t.Fatalf("Job %s: args %v backoffLimit %d restart %s init %+v labels %v", job.Name, c.Containers[0].Args,
			*job.Spec.BackoffLimit, c.RestartPolicy, c.InitContainers, job.Labels)
	}
	f.waitCompact(t, job.Name, "the CompactBackup is Prepare once its Job exists", func(cb *v1alpha1.CompactBackup) bool {
		return cb != nil && cb.Status.State == v1alpha1.CompactPrepare
	})
	if code, out := f.runJob(t, job); code != 0 {
		t.Fatalf("Job %s's command exited %d:\n%s", job.Name, code, out)
	}
	cb := f.compactBackup(t, job.Name)
	from, _ := v1alpha1.ParseTSO("2026-01-01 00:00:00")
	if cb.Status.State != v1alpha1.CompactComplete || cb.Status.Progress != "[READ_META(1/1),COMPACT_WORK(300/300)]" ||
		cb.Status.EndTs != fmt.Sprint(from+2) {
		t.Fatalf("after the Job: status %+v, want Complete, all 300 bytes compacted, endTs %d", cb.Status, from+2)
	}
	if out := f.srv.list(t, ctx, "cluster-a/log/v1/compaction_out/"); len(out) != 2 {
		t.Fatalf("compaction output %v, want the two compacted files", out)
	}
	if cond := unsupportedCondition(cb); cond == nil || !strings.Contains(cond.Message, "spec.br.sendCredToTikv") {
		t.Errorf("Unsupported condition %+v, want it to name spec.br.sendCredToTikv", cond)
	}

	if err := f.client.PingcapV1alpha1().CompactBackups(ns).Delete(ctx, job.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, ctx, jobTimeout, "the deleted CompactBackup's Job is gone", func(ctx context.Context) (bool, error) {
		_, err := f.env.Kube.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if out := f.srv.list(t, ctx, "cluster-a/log/v1/compaction_out/"); len(out) != 2 {
		t.Errorf("deletion touched the compacted files: %v", out)
	}
}

// TestCompactBackupFailsWithTheToolsError: tikv-ctl aborts (the stand-in's
// "Compaction aborted." with its err); the run leaves RetryFailed with
// that error and a retry record; once the Job fails (as the Job controller
// marks it at backoffLimit) the controller makes it Failed, keeping the
// error, with a Warning event.
func TestCompactBackupFailsWithTheToolsError(t *testing.T) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	f.putLogBackup(t, "cluster-b/log")
	env := "  env:\n  - name: STANDIN_TIKV_CTL_FAIL\n    value: \"failed to read meta: NoSuchKey\"\n"
	framework.ApplyYAML(t, ctx, fmt.Sprintf(compactYAML, "failing", 0, ns, env, "cluster-b/log", f.srv.endpoint), ns)
	job := f.waitJob(t, "failing")
	f.waitCompact(t, job.Name, "Prepare", func(cb *v1alpha1.CompactBackup) bool {
		return cb != nil && cb.Status.State == v1alpha1.CompactPrepare
	})
	if code, out := f.runJob(t, job); code == 0 {
		t.Fatalf("the failing Job's command exited 0:\n%s", out)
	}
	const want = "compaction aborted: failed to read meta: NoSuchKey"
	if st := f.compactBackup(t, job.Name).Status; st.State != v1alpha1.CompactRetryFailed || st.Message != want ||
		len(st.BackoffRetryStatus) != 1 || st.BackoffRetryStatus[0].RetryReason != want {
		t.Fatalf("after the failed run: status %+v, want RetryFailed with %q and one retry record", st, want)
	}
	f.failCompactJob(t, job.Name)
	f.waitCompact(t, job.Name, "Failed with the tool's error", func(cb *v1alpha1.CompactBackup) bool {
		return cb != nil && cb.Status.State == v1alpha1.CompactFailed && cb.Status.Message == want
	})
	evs, err := f.env.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=failing,type=Warning"})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range evs.Items {
		reasons = append(reasons, ev.Reason)
	}
	if !strings.Contains(strings.Join(reasons, ","), "CompactJobFailed") {
		t.Errorf("Warning events %v lack CompactJobFailed", reasons)
	}
}

// TestCompactBackupInvalidIsReported: without endTs the CompactBackup is
// Failed with v1.6's message, Invalid, and has no Job. Without concurrency
// and maxRetryTimes the API server defaults them to v1.6's 4 and 6, and
// `kubectl get cpbk` (v1.6's short name) prints v1.6's columns.
func TestCompactBackupInvalidIsReported(t *testing.T) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	y := strings.Replace(fmt.Sprintf(compactYAML, "no-end", 1, ns, "", "cluster-c/log", f.srv.endpoint), "  endTs: \"2026-01-01 01:00:00\"\n", "", 1)
	framework.ApplyYAML(t, ctx, y, ns)
	f.waitCompact(t, "no-end", "Failed for the missing endTs", func(cb *v1alpha1.CompactBackup) bool {
		return cb != nil && cb.Status.State == v1alpha1.CompactFailed && strings.Contains(cb.Status.Message, "end-ts must be set") &&
			invalidCondition(cb) != nil
	})
	if _, err := f.env.Kube.BatchV1().Jobs(ns).Get(ctx, "no-end", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("an invalid CompactBackup has a Job (err %v)", err)
	}

	y = fmt.Sprintf(compactYAML, "defaults", 1, ns, "", "cluster-c/log", f.srv.endpoint)
	y = strings.Replace(strings.Replace(y, "  concurrency: 8\n", "", 1), "  maxRetryTimes: 1\n", "", 1)
	framework.ApplyYAML(t, ctx, y, ns)
	if cb := f.compactBackup(t, "defaults"); cb.Spec.Concurrency != 4 || cb.Spec.MaxRetryTimes != 6 {
		t.Errorf("defaults: concurrency %d maxRetryTimes %d, want 4 and 6", cb.Spec.Concurrency, cb.Spec.MaxRetryTimes)
	}
	out := framework.Kubectl(t, "get", "cpbk", "no-end", "-n", ns)
	if header := strings.Fields(strings.SplitN(out, "\n", 2)[0]); strings.Join(header, " ") != "NAME STATUS ENDTS PROGRESS MESSAGE" {
		t.Errorf("kubectl get cpbk prints columns %v, want NAME STATUS ENDTS PROGRESS MESSAGE", header)
	}
}

func unsupportedCondition(cb *v1alpha1.CompactBackup) *metav1.Condition {
	return findCondition(cb, "Unsupported")
}

func invalidCondition(cb *v1alpha1.CompactBackup) *metav1.Condition {
	return findCondition(cb, "Invalid")
}

func findCondition(cb *v1alpha1.CompactBackup, typ string) *metav1.Condition {
	for i := range cb.Status.Conditions {
		if c := &cb.Status.Conditions[i]; c.Type == typ && c.Status == metav1.ConditionTrue {
			return c
		}
	}
	return nil
}

// failCompactJob marks Job name Failed as the Job controller does at its
// backoffLimit.
func (f *jobFixture) failCompactJob(t *testing.T, name string) {
	t.Helper()
	framework.FailJob(t, f.env, name)
}
