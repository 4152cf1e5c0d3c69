//go:build integration

package api

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// monitoringResources maps the kinds of testdata/v16-monitoring.yaml to their
// resources and to a misspelled field each must refuse.
var monitoringResources = map[string]struct{ plural, typo string }{
	"TidbMonitor":      {"tidbmonitors", "prometheus.retentionTim"},
	"TidbInitializer":  {"tidbinitializers", "permitHosts"},
	"TidbDashboard":    {"tidbdashboards", "pathPrefx"},
	"TidbNGMonitoring": {"tidbngmonitorings", "ngMonitoring.retentionPeriods"},
}

// TestV16MonitoringKindsApplyStrict applies TiDB Operator v1.6 YAML of
// TidbMonitor, TidbInitializer, TidbDashboard and TidbNGMonitoring with
// strict field validation, through both a create and a server-side apply,
// reads values back through the typed client, and checks that a misspelled
// field of each kind is refused (so strict validation is in force).
func TestV16MonitoringKindsApplyStrict(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	objs := readObjects(t, filepath.Join("testdata", "v16-monitoring.yaml"))
	if len(objs) != len(monitoringResources) {
		t.Fatalf("want %d objects in v16-monitoring.yaml, got %d", len(monitoringResources), len(objs))
	}
	for _, obj := range objs {
		res := monitoringResourceOf(t, env.Dynamic, obj, env.Namespace)
		if _, err := res.Create(env.Ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("strict create of %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := res.Patch(env.Ctx, obj.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "v16-test", Force: &force, FieldValidation: "Strict"}); err != nil {
			t.Fatalf("strict server-side apply of %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		checkTypoRefused(t, env.Ctx, res, obj)
	}
	checkMonitoringKept(t, env.Ctx, versioned.NewForConfigOrDie(env.Config), env.Namespace)
}

// checkTypoRefused creates a copy of obj with its kind's misspelled field and
// fails unless the API server refuses it as unknown.
func checkTypoRefused(t *testing.T, ctx context.Context, res dynamic.ResourceInterface, obj *unstructured.Unstructured) {
	t.Helper()
	typoPath := monitoringResources[obj.GetKind()].typo
	typo := obj.DeepCopy()
	typo.SetName("typo")
	fields := append([]string{"spec"}, strings.Split(typoPath, ".")...)
	if err := unstructured.SetNestedField(typo.Object, "x", fields...); err != nil {
		t.Fatal(err)
	}
	_, err := res.Create(ctx, typo, metav1.CreateOptions{FieldValidation: "Strict"})
	if want := `unknown field "spec.` + typoPath + `"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("strict create of %s with a misspelled field: want %s, got %v", obj.GetKind(), want, err)
	}
}

// checkMonitoringKept reads the applied objects through the typed client and
// checks a value deep in each, so nothing was pruned on the way.
func checkMonitoringKept(t *testing.T, ctx context.Context, pc versioned.Interface, ns string) {
	t.Helper()
	v1 := pc.PingcapV1alpha1()
	tm, err := v1.TidbMonitors(ns).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ti, err := v1.TidbInitializers(ns).Get(ctx, "initialize-demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	td, err := v1.TidbDashboards(ns).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tngm, err := v1.TidbNGMonitorings(ns).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := tm.Spec.Prometheus
	rw := p.RemoteWrite
	checks := map[string]bool{
		"tm prometheus.retentionTime": ptrIs(p.RetentionTime, "15d"),
		"tm prometheus.remoteWrite[].tlsConfig.ca.configMap.key": len(rw) == 1 && rw[0].TLSConfig != nil &&
			rw[0].TLSConfig.CA.ConfigMap != nil && rw[0].TLSConfig.CA.ConfigMap.Key == "ca.crt",
		"tm prometheus.remoteWrite[].queueConfig.batchSendDeadline": len(rw) == 1 && rw[0].QueueConfig != nil &&
			rw[0].QueueConfig.BatchSendDeadline == 5000000000,
		"tm prometheus.ingress.tls[].secretName": p.Ingress != nil && len(p.Ingress.TLS) == 1 && p.Ingress.TLS[0].SecretName == "prometheus-tls",
		"tm grafana.passwordSecret.key":          tm.Spec.Grafana != nil && tm.Spec.Grafana.PasswordSecret != nil && tm.Spec.Grafana.PasswordSecret.Key == "password",
		"tm thanos.grpcServerTlsConfig.caFile":   tm.Spec.Thanos != nil && tm.Spec.Thanos.GRPCServerTLSConfig != nil && tm.Spec.Thanos.GRPCServerTLSConfig.CAFile == "/etc/tls/ca.crt",
		"tm dm.clusters[].namespace":             tm.Spec.DM != nil && len(tm.Spec.DM.Clusters) == 1 && tm.Spec.DM.Clusters[0].Namespace == "dm",
		"tm podSecurityContext.fsGroup":          tm.Spec.PodSecurityContext != nil && tm.Spec.PodSecurityContext.FSGroup != nil && *tm.Spec.PodSecurityContext.FSGroup == 2000,
		"tm additionalContainers[].command":      len(tm.Spec.AdditionalContainers) == 1 && len(tm.Spec.AdditionalContainers[0].Command) == 2,
		"ti permitHost":                          ptrIs(ti.Spec.PermitHost, "10.0.0.%"),
		"ti cluster.namespace":                   ti.Spec.Cluster.Namespace == "demo",
		"ti podSecurityContext.runAsUser":        ti.Spec.PodSecurityContext != nil && ti.Spec.PodSecurityContext.RunAsUser != nil && *ti.Spec.PodSecurityContext.RunAsUser == 1000,
		"td pathPrefix":                          ptrIs(td.Spec.PathPrefix, "/dashboard"),
		"td requests.storage":                    td.Spec.Requests.Storage().String() == "10Gi",
		"td storageVolumes[].mountPath":          len(td.Spec.StorageVolumes) == 1 && td.Spec.StorageVolumes[0].MountPath == "/var/log/dashboard",
		"tngm ngMonitoring.retentionPeriod":      tngm.Spec.NGMonitoring.RetentionPeriod == "5d",
		"tngm ngMonitoring.config":               ngLogLevel(tngm.Spec.NGMonitoring.Config) == "info",
		"tngm ngMonitoring.env[].value":          len(tngm.Spec.NGMonitoring.Env) == 1 && tngm.Spec.NGMonitoring.Env[0].Value == "madvdontneed=1",
		"tngm clusters[].namespace":              len(tngm.Spec.Clusters) == 1 && tngm.Spec.Clusters[0].Namespace == "default",
	}
	for field, ok := range checks {
		if !ok {
			t.Errorf("%s was not kept as applied", field)
		}
	}
}

// monitoringResourceOf returns the namespaced dynamic client of obj's kind.
func monitoringResourceOf(t *testing.T, dyn dynamic.Interface, obj *unstructured.Unstructured, ns string) dynamic.ResourceInterface {
	t.Helper()
	r, ok := monitoringResources[obj.GetKind()]
	if !ok {
		t.Fatalf("no resource for kind %s", obj.GetKind())
	}
	return dyn.Resource(schema.GroupVersionResource{Group: "pingcap.com", Version: "v1alpha1", Resource: r.plural}).Namespace(ns)
}

// ngLogLevel returns log.level of an ng-monitoring config, or "".
func ngLogLevel(c *v1alpha1.Config) string {
	if c == nil {
		return ""
	}
	log, _ := c.Items["log"].(map[string]any)
	level, _ := log["level"].(string)
	return level
}
