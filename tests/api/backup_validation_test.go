//go:build integration

package api

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// gcsWithoutProject is a Backup the CRD schema accepts but validation
// rejects: its GCS storage names no project. (Two storage providers, the
// earlier example, are now refused at admission by the CRD's CEL rules.)
const gcsWithoutProject = `apiVersion: pingcap.com/v1alpha1
kind: Backup
metadata: {name: gcs-no-project}
spec:
  br: {cluster: basic}
  gcs: {projectId: ""}
`

// TestBackupValidationReportsInvalidSpecs applies the valid backup examples
// and an invalid Backup to a real apiserver with the operator running: the
// invalid one gets a FailedValidation event, a True Invalid condition and
// phase Invalid through the status subresource, cleared once the spec is
// fixed; the valid ones run (here they wait for their missing TidbCluster:
// a GetTidbClusterFailed event) and get no Invalid condition.
func TestBackupValidationReportsInvalidSpecs(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	backups := pc.PingcapV1alpha1().Backups(env.Namespace)
	ctx := env.Ctx

	framework.ApplyYAML(t, ctx, gcsWithoutProject, env.Namespace)
	for _, f := range []string{"backup.yaml", "restore.yaml", "backup-schedule.yaml"} {
		framework.ApplyYAMLFile(t, ctx, filepath.Join(framework.RepoRoot(), "examples", "backup", f), env.Namespace)
	}

	framework.WaitFor(t, ctx, 60*time.Second, "gcs-no-project has a True Invalid condition naming spec.gcs", func(ctx context.Context) (bool, error) {
		b, err := backups.Get(ctx, "gcs-no-project", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := findCondition(b, v1alpha1.BackupInvalid)
		framework.Observef(ctx, "phase %q invalid %+v", b.Status.Phase, c)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == "InvalidSpec" &&
			strings.Contains(c.Message, "spec.gcs") && b.Status.Phase == v1alpha1.BackupInvalid, nil
	})
	waitEvent(t, env, "gcs-no-project", "FailedValidation", corev1.EventTypeWarning, "spec.gcs")

	// The valid examples run: they wait for the TidbCluster basic, which this
	// namespace lacks, and are never Invalid.
	for _, name := range []string{"basic-snapshot", "basic-restore"} {
		waitEvent(t, env, name, "GetTidbClusterFailed", corev1.EventTypeWarning, "basic")
	}
	b, err := backups.Get(ctx, "basic-snapshot", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status.Phase != v1alpha1.BackupRetryFailed || findCondition(b, v1alpha1.BackupInvalid) != nil {
		t.Errorf("a valid Backup got status %+v", b.Status)
	}
	r, err := pc.PingcapV1alpha1().Restores(env.Namespace).Get(ctx, "basic-restore", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.Phase != v1alpha1.RestoreRetryFailed {
		t.Errorf("a valid Restore got status %+v", r.Status)
	}

	// Fixing the spec clears the condition and the phase.
	_, err = backups.Patch(ctx, "gcs-no-project", types.MergePatchType, []byte(`{"spec":{"gcs":{"projectId":"p"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("fix gcs-no-project: %v", err)
	}
	framework.WaitFor(t, ctx, 60*time.Second, "gcs-no-project has no Invalid condition once fixed", func(ctx context.Context) (bool, error) {
		b, err := backups.Get(ctx, "gcs-no-project", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %q conditions %+v", b.Status.Phase, b.Status.Conditions)
		return findCondition(b, v1alpha1.BackupInvalid) == nil && b.Status.Phase != v1alpha1.BackupInvalid, nil
	})
	waitEvent(t, env, "gcs-no-project", "GetTidbClusterFailed", corev1.EventTypeWarning, "basic")
}

func findCondition(b *v1alpha1.Backup, typ v1alpha1.BackupConditionType) *v1alpha1.BackupCondition {
	for i := range b.Status.Conditions {
		if b.Status.Conditions[i].Type == typ {
			return &b.Status.Conditions[i]
		}
	}
	return nil
}

// waitEvent waits for an event on the object name with reason and type
// whose message contains text.
func waitEvent(t *testing.T, env *framework.Env, name, reason, typ, text string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, 60*time.Second, "a "+reason+" event on "+name, func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": name, "reason": reason}.String(),
		})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			framework.Observef(ctx, "%s %s: %s", e.Type, e.Reason, e.Message)
			if e.Type == typ && strings.Contains(e.Message, text) {
				return true, nil
			}
		}
		return false, nil
	})
}
