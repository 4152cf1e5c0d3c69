//go:build integration

package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// resources maps the kinds of testdata/v16-fields.yaml to their resources.
var resources = map[string]string{
	"TidbCluster":    "tidbclusters",
	"Backup":         "backups",
	"Restore":        "restores",
	"BackupSchedule": "backupschedules",
}

// TestV16FieldsApplyStrict applies TiDB Operator v1.6 YAML using the fields
// our CRDs lacked (component securityContext, automountServiceAccountToken,
// volumeAttributesClassName, tiproxy.storageClassName, s3.forcePathStyle,
// Restore backoffLimit and prune, BackupSchedule minCompactStartTs) with strict
// field validation, through both a create and a server-side apply, and reads
// them back unpruned. A misspelled field is refused, which shows that strict
// validation is in force.
func TestV16FieldsApplyStrict(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	objs := readObjects(t, filepath.Join("testdata", "v16-fields.yaml"))
	if len(objs) != len(resources) {
		t.Fatalf("want %d objects in v16-fields.yaml, got %d", len(resources), len(objs))
	}
	for _, obj := range objs {
		res := resourceOf(t, env.Dynamic, obj, env.Namespace)
		_, err := res.Create(env.Ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		if err != nil {
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
	}
	checkV16FieldsKept(t, env.Ctx, versioned.NewForConfigOrDie(env.Config), env.Namespace)

	typo := objs[0].DeepCopy()
	if err := unstructured.SetNestedField(typo.Object, true, "spec", "tikv", "securityContex", "runAsNonRoot"); err != nil {
		t.Fatal(err)
	}
	typo.SetName("typo")
	_, err := resourceOf(t, env.Dynamic, typo, env.Namespace).Create(env.Ctx, typo, metav1.CreateOptions{FieldValidation: "Strict"})
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.tikv.securityContex"`) {
		t.Fatalf("strict create of a misspelled field: want unknown field spec.tikv.securityContex, got %v", err)
	}
}

// checkV16FieldsKept reads the applied objects through the typed client and
// checks a value of each formerly missing field.
func checkV16FieldsKept(t *testing.T, ctx context.Context, pc versioned.Interface, ns string) {
	t.Helper()
	v1 := pc.PingcapV1alpha1()
	tc, err := v1.TidbClusters(ns).Get(ctx, "v16", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := tc.Spec
	checks := map[string]bool{
		"tikv.securityContext.runAsUser":                  s.TiKV.SecurityContext != nil && s.TiKV.SecurityContext.RunAsUser != nil && *s.TiKV.SecurityContext.RunAsUser == 1000,
		"pd.securityContext.capabilities.drop":            s.PD.SecurityContext != nil && s.PD.SecurityContext.Capabilities != nil && len(s.PD.SecurityContext.Capabilities.Drop) == 1,
		"discovery.automountServiceAccountToken":          s.Discovery.AutomountServiceAccountToken != nil && !*s.Discovery.AutomountServiceAccountToken,
		"tikv.automountServiceAccountToken":               s.TiKV.AutomountServiceAccountToken != nil && *s.TiKV.AutomountServiceAccountToken,
		"tikv.logTailer.securityContext":                  s.TiKV.LogTailer != nil && s.TiKV.LogTailer.SecurityContext != nil,
		"tidb.slowLogTailer.securityContext":              s.TiDB.SlowLogTailer != nil && s.TiDB.SlowLogTailer.SecurityContext != nil,
		"tiflash.initializer.securityContext":             s.TiFlash.Initializer != nil && s.TiFlash.Initializer.SecurityContext != nil,
		"tikv.volumeAttributesClassName":                  ptrIs(s.TiKV.VolumeAttributesClassName, "fast"),
		"tikv.storageVolumes[].volumeAttributesClassName": len(s.TiKV.StorageVolumes) == 1 && ptrIs(s.TiKV.StorageVolumes[0].VolumeAttributesClassName, "slow"),
		"tiflash.storageClaims[].volumeAttributesClassName": len(s.TiFlash.StorageClaims) == 1 &&
			ptrIs(s.TiFlash.StorageClaims[0].VolumeAttributesClassName, "fast"),
		"tiproxy.storageClassName": ptrIs(s.TiProxy.StorageClassName, "standard"),
	}
	bk, err := v1.Backups(ns).Get(ctx, "v16", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checks["backup s3.forcePathStyle"] = bk.Spec.S3 != nil && bk.Spec.S3.ForcePathStyle != nil && *bk.Spec.S3.ForcePathStyle
	checks["backup volumeAttributesClassName"] = ptrIs(bk.Spec.VolumeAttributesClassName, "fast")
	rt, err := v1.Restores(ns).Get(ctx, "v16", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checks["restore backoffLimit"] = rt.Spec.BackoffLimit == 3
	checks["restore prune"] = rt.Spec.Prune == "afterFailed"
	checks["restore automountServiceAccountToken"] = rt.Spec.AutomountServiceAccountToken != nil && !*rt.Spec.AutomountServiceAccountToken
	bks, err := v1.BackupSchedules(ns).Get(ctx, "v16", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checks["schedule minCompactStartTs"] = bks.Spec.MinCompactStartTs == "443668800000000000"
	checks["schedule logBackupTemplate.volumeAttributesClassName"] = bks.Spec.LogBackupTemplate != nil &&
		ptrIs(bks.Spec.LogBackupTemplate.VolumeAttributesClassName, "fast")
	for field, ok := range checks {
		if !ok {
			t.Errorf("%s was not kept as applied", field)
		}
	}
}

// readObjects reads a multi-document YAML file into unstructured objects.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// resourceOf returns the namespaced dynamic client of obj's kind.
func resourceOf(t *testing.T, dyn dynamic.Interface, obj *unstructured.Unstructured, ns string) dynamic.ResourceInterface {
	t.Helper()
	plural, ok := resources[obj.GetKind()]
	if !ok {
		t.Fatalf("no resource for kind %s", obj.GetKind())
	}
	return dyn.Resource(schema.GroupVersionResource{Group: "pingcap.com", Version: "v1alpha1", Resource: plural}).Namespace(ns)
}

// ptrIs reports whether p points to want.
func ptrIs(p *string, want string) bool { return p != nil && *p == want }

// v16PD is a cluster whose PD and discovery use the v1.6 fields the
// operator acts on (discovery without the automatic token mounts it itself).
const v16PD = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: v16pd}
spec:
  version: v8.5.0
  discovery:
    securityContext: {runAsNonRoot: true}
    automountServiceAccountToken: false
  pd:
    replicas: 1
    requests: {storage: 1Gi}
    volumeAttributesClassName: fast
    automountServiceAccountToken: false
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    storageVolumes:
    - {name: log, storageSize: 1Gi, volumeAttributesClassName: slow}
`

// TestV16FieldsReachTheObjects runs the operator on a cluster using the v1.6
// fields: the API server accepts the PD StatefulSet built from them (its
// container securityContext, no service account token, volume attributes
// classes on the claim templates) and discovery's Deployment (its container
// securityContext, no automatic token but the projected one), and the
// Unsupported condition names nothing.
func TestV16FieldsReachTheObjects(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAML(t, env.Ctx, v16PD, env.Namespace)
	var sts *appsv1.StatefulSet
	framework.WaitFor(t, env.Ctx, time.Minute, "StatefulSet v16pd-pd exists", func(ctx context.Context) (bool, error) {
		var err error
		sts, err = env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, "v16pd-pd", metav1.GetOptions{})
		return err == nil, nil
	})
	pod := sts.Spec.Template.Spec
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("pd pod automountServiceAccountToken = %v, want false", pod.AutomountServiceAccountToken)
	}
	if sc := pod.Containers[0].SecurityContext; sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 {
		t.Errorf("pd container securityContext = %+v", sc)
	}
	classes := map[string]string{}
	for _, c := range sts.Spec.VolumeClaimTemplates {
		if c.Spec.VolumeAttributesClassName != nil {
			classes[c.Name] = *c.Spec.VolumeAttributesClassName
		}
	}
	if classes["pd"] != "fast" || classes["pd-log"] != "slow" {
		t.Errorf("claim template classes = %v, want pd fast, pd-log slow", classes)
	}
	framework.WaitFor(t, env.Ctx, time.Minute, "discovery runs as non-root", func(ctx context.Context) (bool, error) {
		d, err := env.Kube.AppsV1().Deployments(env.Namespace).Get(ctx, "v16pd-discovery", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		sc := d.Spec.Template.Spec.Containers[0].SecurityContext
		p := d.Spec.Template.Spec
		projected := len(p.Volumes) == 1 && p.Volumes[0].Projected != nil && len(p.Containers[0].VolumeMounts) == 1 &&
			p.Containers[0].VolumeMounts[0].MountPath == "/var/run/secrets/kubernetes.io/serviceaccount"
		return sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot &&
			p.AutomountServiceAccountToken != nil && !*p.AutomountServiceAccountToken && projected, nil
	})
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.WaitFor(t, env.Ctx, time.Minute, "Unsupported names nothing", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "v16pd", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterUnsupported)
		framework.Observef(ctx, "unsupported %+v", c)
		return c != nil && c.Status == metav1.ConditionFalse, nil
	})
}
