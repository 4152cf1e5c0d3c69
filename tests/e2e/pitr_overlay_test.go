//go:build integration

package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/pelletier/go-toml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestPiTRRestoreRunsTiKVWithGCOverlay: a PiTR Restore of the running
// cluster basic (examples/basic, simulator) annotates the cluster, which
// rolls TiKV onto a ConfigMap carrying gc.ratio-threshold = -1; the
// restore Job is created only once every TiKV pod runs that template,
// and while the restore runs the ConfigMap TiKV mounts carries the
// overlay. Once the Restore is Complete (written as the backup-manager
// does) the annotation goes and TiKV rolls back onto the very ConfigMap it
// mounted before (same data, same hashed name), without the key.
func TestPiTRRestoreRunsTiKVWithGCOverlay(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	ctx, ns := env.Ctx, env.Namespace
	framework.ApplyYAMLFile(t, ctx, filepath.Join(framework.RepoRoot(), "manifests", "backup", "backup-rbac.yaml"), ns)
	before := tikvConfigMap(t, env)
	if ratio, ok := gcRatioThreshold(t, env, before); ok {
		t.Fatalf("examples/basic sets gc.ratio-threshold = %v; the test expects it unset", ratio)
	}

	s3 := v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "backups", Prefix: "log", SecretName: "s3-secret"}}
	full := v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "backups", Prefix: "full", SecretName: "s3-secret"}}
	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "pitr"}, Spec: v1alpha1.RestoreSpec{
		Mode: v1alpha1.RestoreModePiTR, StorageProvider: s3, PitrRestoredTs: "449500000000000000",
		PitrFullBackupStorageProvider: full, BR: &v1alpha1.BRConfig{Cluster: "basic"}}}
	if _, err := pc.PingcapV1alpha1().Restores(ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Until the Job exists: whenever the Restore waits, it says so; the
	// Job appears only after TiKV rolled onto the overlay.
	sawWait := false
	framework.WaitFor(t, ctx, readyTimeout, "the restore Job, after TiKV restarted with the overlay", func(ctx context.Context) (bool, error) {
		got, err := pc.PingcapV1alpha1().Restores(ns).Get(ctx, "pitr", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if c := condition.GetRestoreCondition(&got.Status, v1alpha1.RestoreScheduled); c != nil && c.Reason == backup.ReasonWaitGCOverlay {
			sawWait = true
		}
		_, err = env.Kube.BatchV1().Jobs(ns).Get(ctx, "restore-pitr", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			framework.Observef(ctx, "restore conditions %+v", got.Status.Conditions)
			return false, nil
		}
		return err == nil, err
	})
	if !sawWait {
		t.Errorf("the Restore never reported %s before its Job", backup.ReasonWaitGCOverlay)
	}
	sts := tikvStatefulSet(t, env)
	st := sts.Status
	if sts.Spec.Template.Annotations[label.AnnTiKVConfigOverlay] != label.TiKVGCOverlay || st.CurrentRevision != st.UpdateRevision ||
		st.UpdatedReplicas != *sts.Spec.Replicas || st.ReadyReplicas != *sts.Spec.Replicas {
		t.Fatalf("the restore Job exists while TiKV has not rolled onto the overlay: template annotations %v, status %+v",
			sts.Spec.Template.Annotations, st)
	}
	during := tikvConfigMap(t, env)
	if ratio, ok := gcRatioThreshold(t, env, during); !ok || ratio != -1.0 {
		t.Fatalf("while the restore runs TiKV's ConfigMap %s has gc.ratio-threshold %v (set %v), want -1", during, ratio, ok)
	}
	if tc, err := pc.PingcapV1alpha1().TidbClusters(ns).Get(ctx, "basic", metav1.GetOptions{}); err != nil ||
		tc.Annotations[label.AnnPiTRRestore] != ns+"/pitr" {
		t.Fatalf("cluster annotations %v (%v), want %s=%s/pitr", tc.Annotations, err, label.AnnPiTRRestore, ns)
	}

	completeRestore(t, env, pc, "pitr")
	waitReady(t, env, pc, "TiKV rolled back without the overlay", func(tc *v1alpha1.TidbCluster) bool {
		s := tikvStatefulSet(t, env)
		_, marked := s.Spec.Template.Annotations[label.AnnTiKVConfigOverlay]
		return tc.Annotations[label.AnnPiTRRestore] == "" && !marked && s.Status.CurrentRevision == s.Status.UpdateRevision &&
			s.Status.UpdatedReplicas == *s.Spec.Replicas
	})
	after := tikvConfigMap(t, env)
	if _, ok := gcRatioThreshold(t, env, after); ok || after != before {
		t.Errorf("after the restore TiKV mounts %s (gc.ratio-threshold set: %v), want the ConfigMap of before, %s", after, ok, before)
	}
}

// tikvStatefulSet reads basic-tikv.
func tikvStatefulSet(t *testing.T, env *framework.Env) *appsv1.StatefulSet {
	t.Helper()
	sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, "basic-tikv", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sts
}

// tikvConfigMap is the ConfigMap TiKV's pod template mounts as its config.
func tikvConfigMap(t *testing.T, env *framework.Env) string {
	t.Helper()
	for _, v := range tikvStatefulSet(t, env).Spec.Template.Spec.Volumes {
		if v.Name == "config" && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	t.Fatal("basic-tikv mounts no config ConfigMap")
	return ""
}

// gcRatioThreshold reads gc.ratio-threshold from ConfigMap name's TiKV config.
func gcRatioThreshold(t *testing.T, env *framework.Env, name string) (any, bool) {
	t.Helper()
	cm, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := toml.Unmarshal([]byte(cm.Data["config-file"]), &cfg); err != nil {
		t.Fatalf("ConfigMap %s: %v", name, err)
	}
	gc, _ := cfg["gc"].(map[string]any)
	v, ok := gc["ratio-threshold"]
	return v, ok
}

// completeRestore writes Running and Complete on Restore name as the
// backup-manager does, through the status subresource.
func completeRestore(t *testing.T, env *framework.Env, pc versioned.Interface, name string) {
	t.Helper()
	rs := pc.PingcapV1alpha1().Restores(env.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r, err := rs.Get(env.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		for _, typ := range []v1alpha1.RestoreConditionType{v1alpha1.RestoreRunning, v1alpha1.RestoreComplete} {
			condition.SetRestoreCondition(&r.Status, v1alpha1.RestoreCondition{Type: typ, Status: corev1.ConditionTrue}, now)
		}
		r.Status.CommitTs = "449500000000000000"
		_, err = rs.UpdateStatus(env.Ctx, r, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("completing Restore %s: %v", name, err)
	}
}
