//go:build integration

package api

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// registryCluster sets a field of the unsupported registry and a
// delete-slots annotation; registryInitializer sets the v1 image.
const (
	registryCluster = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: named
  annotations: {tikv.tidb.pingcap.com/delete-slots: "[1]"}
spec:
  version: v8.5.0
  pd:
    replicas: 1
    requests: {storage: 1Gi}
    enableDashboardInternalProxy: true
`
	registryBackup = `apiVersion: pingcap.com/v1alpha1
kind: Backup
metadata: {name: kms}
spec:
  br: {cluster: named}
  useKMS: true
  from: {host: named-tidb, secretName: tidb-secret}
  s3: {provider: aws, bucket: b, prefix: p}
`
	registryInitializer = `apiVersion: pingcap.com/v1alpha1
kind: TidbInitializer
metadata: {name: init}
spec:
  image: tnir/mysqlclient
  cluster: {name: named}
`
)

// TestUnsupportedRegistryIsNamed runs the operator with the chart's
// credentials on objects setting fields the registry lists: the
// TidbCluster's, the TidbInitializer's and the Backup's Unsupported
// conditions name them (the Backup's phase stays its own), each with a
// Warning event.
func TestUnsupportedRegistryIsNamed(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAML(t, env.Ctx, registryCluster, env.Namespace)
	framework.ApplyYAML(t, env.Ctx, registryInitializer, env.Namespace)
	framework.ApplyYAML(t, env.Ctx, registryBackup, env.Namespace)
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.WaitFor(t, env.Ctx, time.Minute, "the TidbCluster names the fields", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "named", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterUnsupported)
		framework.Observef(ctx, "unsupported %+v", c)
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "spec.pd.enableDashboardInternalProxy") &&
			strings.Contains(c.Message, "tikv.tidb.pingcap.com/delete-slots"), nil
	})
	framework.WaitFor(t, env.Ctx, time.Minute, "the TidbInitializer names spec.image", func(ctx context.Context) (bool, error) {
		ti, err := pc.PingcapV1alpha1().TidbInitializers(env.Namespace).Get(ctx, "init", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range ti.Status.Conditions {
			if c.Type == batchv1.JobConditionType("Unsupported") && c.Status == corev1.ConditionTrue {
				return strings.Contains(c.Message, "spec.image"), nil
			}
		}
		return false, nil
	})
	framework.WaitFor(t, env.Ctx, time.Minute, "the Backup names spec.useKMS, its phase its own", func(ctx context.Context) (bool, error) {
		b, err := pc.PingcapV1alpha1().Backups(env.Namespace).Get(ctx, "kms", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %q conditions %+v", b.Status.Phase, b.Status.Conditions)
		for _, c := range b.Status.Conditions {
			if string(c.Type) == "Unsupported" && c.Status == corev1.ConditionTrue {
				return strings.Contains(c.Message, "spec.useKMS") && b.Status.Phase != "Unsupported", nil
			}
		}
		return false, nil
	})
	for _, kind := range []string{"TidbCluster", "TidbInitializer", "Backup"} {
		framework.WaitFor(t, env.Ctx, time.Minute, kind+" Warning Unsupported", func(ctx context.Context) (bool, error) {
			evs, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, ev := range evs.Items {
				if ev.InvolvedObject.Kind == kind && ev.Type == corev1.EventTypeWarning && ev.Reason == "Unsupported" {
					return true, nil
				}
			}
			return false, nil
		})
	}
}
