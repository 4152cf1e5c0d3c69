//go:build integration

package helm

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

var (
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	tcResource  = schema.GroupVersionResource{Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbclusters"}
)

const (
	tcCRD = "tidbclusters.pingcap.com"
	// newerProperty is what the older CRD set lacks: commit 4519afa
	// ("api: the v1.6 fields we lacked") added volumeAttributesClassName to
	// every component, storage volume and TiFlash storage claim of
	// TidbCluster, and to Backup, Restore and BackupSchedule; the release
	// before it served none of them.
	newerProperty = "volumeAttributesClassName"
	// removedProperty is what the older CRD set has and the repo's lacks:
	// commit a778ccc ("api: drop TiKVStore.lastHeartbeatTime from status")
	// removed it from the TiKV and TiFlash store records of TidbCluster's
	// status. The older set is thus the schema of a release before both
	// commits, for these two fields.
	removedProperty = "lastHeartbeatTime"
	// attributesClass is what the test's TidbCluster sets as spec.tikv.volumeAttributesClassName.
	attributesClass = "fast-io"
)

// TestHelmUpgradeLeavesOlderCRDsUntilServerSideApply shows what upgrading
// the chart does to the CRDs and that the step docs/user-guide.md
// ("Upgrading") documents before `helm upgrade` brings them up to date:
//
//  1. the chart is installed with an older CRD set, so that helm itself
//     creates the TidbCluster CRD (with a client-side create, field manager
//     "helm") as a user's first install of an older release did. The older
//     set is built from the repo's CRDs in Go, as a release before commits
//     4519afa and a778ccc served them: every volumeAttributesClassName
//     property dropped (newerProperty) and the TiKV/TiFlash store records'
//     status lastHeartbeatTime put back (removedProperty). A TidbCluster
//     setting spec.tikv.volumeAttributesClassName is then rejected by
//     kubectl's strict validation, and pruned without it;
//  2. `helm upgrade` to the repo's chart leaves that CRD as it was (same
//     generation, still the older schema): helm never upgrades crds/;
//  3. `kubectl apply --server-side -f manifests/crd.yaml` alone fails, with
//     a conflict with manager "helm" on .spec.versions (an atomic list helm's
//     create owns whole), so --force-conflicts is needed;
//  4. `kubectl apply --server-side --force-conflicts -f manifests/crd.yaml`
//     makes every CRD's spec the repo's (the removed property gone too),
//     and the TidbCluster is then accepted with the new field, which it
//     keeps.
//
// CRDs are cluster-scoped and shared by every test of the suite, so:
//   - the test does not call t.Parallel, so it runs alone: sequential tests
//     run one after another, the parallel ones (the RBAC tests, which
//     install the chart) start only once every sequential test and its
//     cleanups have finished, and hack/test-integration.sh runs one test
//     package at a time (-p 1), so no other package's test runs either;
//   - helm skips a CRD that exists, and earlier packages of the suite have
//     applied manifests/crd.yaml, so the test deletes the TidbCluster CRD
//     first (which deletes every TidbCluster). It refuses to when a
//     TidbCluster lives in a namespace the harness did not create, so a
//     developer's cluster named by KUBETIDB_KUBECONFIG loses nothing. The
//     other eight CRDs are left alone (a leftover Backup's finalizer could
//     hold their deletion forever): helm creates the older ones that do not
//     exist (all of them when this package runs alone) and skips the rest,
//     which already are the repo's;
//   - before anything is deleted, a cleanup is registered that applies the
//     repo's CRDs with the documented command and checks them, so the
//     cluster never keeps an older CRD after the test, whatever failed.
func TestHelmUpgradeLeavesOlderCRDsUntilServerSideApply(t *testing.T) {
	env := framework.NewEnv(t)
	ns := env.Namespace
	release := releaseName(ns)
	crdFile := filepath.Join(framework.RepoRoot(), "manifests", "crd.yaml")
	refuseForeignTidbClusters(t, env)
	t.Cleanup(func() { restoreRepoCRDs(t, env, crdFile) })
	deleteCRD(t, env, tcCRD)

	old := olderChart(t)
	installChartFrom(t, old, release, ns)
	crd := getCRD(t, env, tcCRD)
	if !managedBy(crd, "helm", metav1.ManagedFieldsOperationUpdate) {
		t.Fatalf("CRD %s was not created by helm: managedFields %+v", tcCRD, crd.GetManagedFields())
	}
	if tikvHasAttributesClass(t, crd) {
		t.Fatalf("the older CRD %s served by helm install already has spec.tikv.%s", tcCRD, newerProperty)
	}
	if n := storesHaveHeartbeat(t, crd); n != len(storeRecords) {
		t.Fatalf("the older CRD %s has %s in %d of the %d store records", tcCRD, removedProperty, n, len(storeRecords))
	}
	t.Logf("helm install created CRD %s without spec.tikv.%s, with the stores' %s (generation %d)",
		tcCRD, newerProperty, removedProperty, crd.GetGeneration())
	tcFile := tidbClusterWithAttributesClass(t)
	_, stderr, err := framework.KubectlErr("apply", "-n", ns, "-f", tcFile)
	if err == nil || !strings.Contains(stderr, `unknown field "spec.tikv.`+newerProperty+`"`) {
		t.Fatalf("kubectl apply of a TidbCluster setting spec.tikv.%s under the older CRD: err=%v, stderr %s; want the unknown field rejected",
			newerProperty, err, stderr)
	}
	framework.Kubectl(t, "apply", "--validate=false", "-n", ns, "-f", tcFile)
	if got := tikvAttributesClass(t, env, ns); got != "" {
		t.Fatalf("the older CRD kept spec.tikv.%s=%q; it should have pruned it", newerProperty, got)
	}

	// helm upgrade to the repo's chart: crds/ are not touched.
	runHelm(t, "upgrade", release, chartDir(), "--namespace", ns, "--wait", "--timeout", "2m",
		"--set", "operatorImage=kubetidb/tidb-operator:kwok-test")
	after := getCRD(t, env, tcCRD)
	if after.GetGeneration() != crd.GetGeneration() || tikvHasAttributesClass(t, after) || storesHaveHeartbeat(t, after) == 0 {
		t.Fatalf("helm upgrade changed CRD %s (generation %d -> %d, spec.tikv.%s served: %t); helm never upgrades crds/",
			tcCRD, crd.GetGeneration(), after.GetGeneration(), newerProperty, tikvHasAttributesClass(t, after))
	}

	// The documented step, first without --force-conflicts.
	_, stderr, err = framework.KubectlErr("apply", "--server-side", "-f", crdFile)
	if err == nil || !strings.Contains(stderr, `conflict with "helm"`) || !strings.Contains(stderr, ".spec.versions") {
		t.Errorf("kubectl apply --server-side without --force-conflicts over helm's CRDs: err=%v, stderr %s; want a conflict with helm on .spec.versions",
			err, stderr)
	} else {
		t.Logf("without --force-conflicts: %s", strings.SplitN(strings.TrimSpace(stderr), "\n", 2)[0])
	}
	framework.Kubectl(t, "apply", "--server-side", "--force-conflicts", "-f", crdFile)
	checkRepoCRDs(t, env)
	if n := storesHaveHeartbeat(t, getCRD(t, env, tcCRD)); n != 0 {
		t.Errorf("after the server-side apply %d store records still have %s, which the repo's CRD removed", n, removedProperty)
	}

	// The API server serves a changed CRD's objects with the new schema a
	// moment after the update, so a strict apply is retried until accepted.
	framework.WaitFor(t, env.Ctx, time.Minute, "the TidbCluster with spec.tikv."+newerProperty+" is accepted", func(ctx context.Context) (bool, error) {
		_, stderr, err := framework.KubectlErr("apply", "-n", ns, "-f", tcFile)
		framework.Observef(ctx, "kubectl apply: %v %s", err, stderr)
		return err == nil, nil
	})
	if got := tikvAttributesClass(t, env, ns); got != attributesClass {
		t.Errorf("spec.tikv.%s = %q after the CRD upgrade, want %q (pruned?)", newerProperty, got, attributesClass)
	}
}

// refuseForeignTidbClusters fails the test before anything is deleted when
// a TidbCluster lives in a namespace the harness did not create.
func refuseForeignTidbClusters(t *testing.T, env *framework.Env) {
	t.Helper()
	list, err := env.Dynamic.Resource(tcResource).List(env.Ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return // no TidbCluster CRD yet
	}
	if err != nil {
		t.Fatalf("list TidbClusters: %v", err)
	}
	for _, tc := range list.Items {
		nsObj, err := env.Kube.CoreV1().Namespaces().Get(env.Ctx, tc.GetNamespace(), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace of TidbCluster %s/%s: %v", tc.GetNamespace(), tc.GetName(), err)
		}
		if nsObj.Labels[framework.LabelTest] != "true" {
			t.Fatalf("TidbCluster %s/%s lives in a namespace the test harness did not create; this test deletes the %s CRD and with it every TidbCluster, so it runs only on a test cluster",
				tc.GetNamespace(), tc.GetName(), tcCRD)
		}
	}
}

// deleteCRD deletes a CRD and waits until it is gone (its objects first).
func deleteCRD(t *testing.T, env *framework.Env, name string) {
	t.Helper()
	err := env.Dynamic.Resource(crdResource).Delete(env.Ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatalf("delete CRD %s: %v", name, err)
	}
	framework.WaitFor(t, env.Ctx, 2*time.Minute, "CRD "+name+" is deleted", func(ctx context.Context) (bool, error) {
		_, err := env.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		left, lerr := env.Dynamic.Resource(tcResource).List(ctx, metav1.ListOptions{})
		if lerr == nil {
			for _, tc := range left.Items {
				framework.Observef(ctx, "TidbCluster %s/%s left, finalizers %v", tc.GetNamespace(), tc.GetName(), tc.GetFinalizers())
			}
		}
		return false, nil
	})
}

// olderChart copies the chart into a temp dir with the older CRD set in
// crds/: manifests/crd/*.yaml with every newerProperty dropped.
func olderChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tidb-operator")
	err := filepath.WalkDir(chartDir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(chartDir(), path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if filepath.Dir(rel) == "crds" {
			return nil // written below
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy the chart: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "manifests", "crd", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("manifests/crd: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd map[string]any
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		n := dropProperty(crd, newerProperty)
		if filepath.Base(f) == "pingcap.com_tidbclusters.yaml" {
			if n == 0 {
				t.Fatalf("%s has no %s property to drop: pick another newer field for this test", f, newerProperty)
			}
			addStoreHeartbeat(t, crd)
		}
		out, err := yaml.Marshal(crd)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "crds", filepath.Base(f)), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// dropProperty deletes the property name from every `properties` of a
// JSON schema anywhere below v and returns how many it deleted.
func dropProperty(v any, name string) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			if _, ok := props[name]; ok {
				delete(props, name)
				n++
			}
		}
		for _, c := range x {
			n += dropProperty(c, name)
		}
	case []any:
		for _, c := range x {
			n += dropProperty(c, name)
		}
	}
	return n
}

// storeRecords are the status maps of TidbCluster whose values are
// TiKVStore records (status.<component>.<field>.additionalProperties).
var storeRecords = [][2]string{{"tikv", "stores"}, {"tikv", "peerStores"}, {"tikv", "tombstoneStores"},
	{"tiflash", "stores"}, {"tiflash", "peerStores"}, {"tiflash", "tombstoneStores"}}

// addStoreHeartbeat puts removedProperty back into every TiKVStore record
// of the TidbCluster CRD, as it was before commit a778ccc.
func addStoreHeartbeat(t *testing.T, crd map[string]any) {
	t.Helper()
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	for i, v := range versions {
		vm, _ := v.(map[string]any)
		for _, r := range storeRecords {
			path := storeRecordPath(r)
			props, found, err := unstructured.NestedMap(vm, path...)
			if err != nil || !found || props["ip"] == nil {
				t.Fatalf("TidbCluster CRD has no TiKVStore record at %s (%v): the test's older schema needs updating", strings.Join(path, "."), err)
			}
			props[removedProperty] = map[string]any{"description": "LastHeartbeatTime is the store's last heartbeat to PD.",
				"format": "date-time", "type": "string"}
			if err := unstructured.SetNestedMap(vm, props, path...); err != nil {
				t.Fatal(err)
			}
		}
		versions[i] = vm
	}
	if err := unstructured.SetNestedSlice(crd, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
}

func storeRecordPath(r [2]string) []string {
	return []string{"schema", "openAPIV3Schema", "properties", "status", "properties", r[0], "properties", r[1],
		"additionalProperties", "properties"}
}

// storesHaveHeartbeat reports how many TiKVStore records of the CRD's
// v1alpha1 schema have removedProperty.
func storesHaveHeartbeat(t testing.TB, crd *unstructured.Unstructured) int {
	t.Helper()
	n := 0
	for _, r := range storeRecords {
		if _, found, _ := unstructured.NestedMap(servedVersion(t, crd), append(storeRecordPath(r), removedProperty)...); found {
			n++
		}
	}
	return n
}

// installChartFrom is install for a chart directory other than the repo's.
func installChartFrom(t *testing.T, dir, release, namespace string) {
	t.Helper()
	runHelm(t, "install", release, dir, "--namespace", namespace, "--wait", "--timeout", "2m",
		"--set", "operatorImage=kubetidb/tidb-operator:kwok-test")
	t.Cleanup(func() {
		if _, stderr, err := runHelmErr(t, "uninstall", release, "--namespace", namespace, "--wait"); err != nil {
			t.Errorf("helm uninstall %s: %v\n%s", release, err, stderr)
		}
	})
}

func getCRD(t *testing.T, env *framework.Env, name string) *unstructured.Unstructured {
	t.Helper()
	crd, err := env.Dynamic.Resource(crdResource).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get CRD %s: %v", name, err)
	}
	return crd
}

func managedBy(obj *unstructured.Unstructured, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, m := range obj.GetManagedFields() {
		if m.Manager == manager && m.Operation == op && m.Subresource == "" {
			return true
		}
	}
	return false
}

// servedVersion returns the CRD's v1alpha1 entry of spec.versions.
func servedVersion(t testing.TB, crd *unstructured.Unstructured) map[string]any {
	t.Helper()
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		t.Fatalf("CRD %s versions: %v", crd.GetName(), err)
	}
	for _, v := range versions {
		if vm, _ := v.(map[string]any); vm["name"] == "v1alpha1" {
			return vm
		}
	}
	t.Fatalf("CRD %s serves no v1alpha1", crd.GetName())
	return nil
}

// tikvHasAttributesClass reports whether the CRD's v1alpha1 schema has
// spec.tikv.volumeAttributesClassName.
func tikvHasAttributesClass(t testing.TB, crd *unstructured.Unstructured) bool {
	t.Helper()
	_, found, err := unstructured.NestedMap(servedVersion(t, crd), "schema", "openAPIV3Schema", "properties", "spec", "properties",
		"tikv", "properties", newerProperty)
	if err != nil {
		t.Fatalf("CRD %s schema: %v", crd.GetName(), err)
	}
	return found
}

// tidbClusterWithAttributesClass writes examples/basic with
// spec.tikv.volumeAttributesClassName set and returns the file's path.
func tidbClusterWithAttributesClass(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tc map[string]any
	if err := yaml.Unmarshal(data, &tc); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(tc, attributesClass, "spec", "tikv", newerProperty); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(tc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tidb-cluster.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tikvAttributesClass reads TidbCluster basic's spec.tikv.volumeAttributesClassName.
func tikvAttributesClass(t *testing.T, env *framework.Env, namespace string) string {
	t.Helper()
	tc, err := env.Dynamic.Resource(tcResource).Namespace(namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get TidbCluster basic: %v", err)
	}
	s, _, _ := unstructured.NestedString(tc.Object, "spec", "tikv", newerProperty)
	return s
}

// checkRepoCRDs waits until every CRD of manifests/crd is Established and
// asserts that its spec is the file's (the API server defaults only
// spec.conversion, to strategy None).
func checkRepoCRDs(t testing.TB, env *framework.Env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, plural := range operator.CRDPlurals(t) {
		name := plural + ".pingcap.com"
		framework.WaitFor(t, ctx, time.Minute, "CRD "+name+" Established", func(ctx context.Context) (bool, error) {
			out, stderr, err := framework.KubectlErr("get", "crd", name, "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
			framework.Observef(ctx, "Established=%q %s %v", out, stderr, err)
			return err == nil && out == "True", nil
		})
		data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "crd", "pingcap.com_"+plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var file map[string]any
		if err := yaml.Unmarshal(data, &file); err != nil {
			t.Fatal(err)
		}
		want, _ := file["spec"].(map[string]any)
		if _, ok := want["conversion"]; !ok {
			want["conversion"] = map[string]any{"strategy": "None"}
		}
		live, err := env.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get CRD %s: %v", name, err)
		}
		if got := live.Object["spec"]; !reflect.DeepEqual(normalize(t, got), normalize(t, want)) {
			t.Errorf("CRD %s in the cluster is not manifests/crd/pingcap.com_%s.yaml (spec.tikv.%s served: %t)",
				name, plural, newerProperty, plural == "tidbclusters" && tikvHasAttributesClass(t, live))
		}
	}
}

// normalize round-trips v through JSON, so that numbers decoded from YAML
// and from the API compare equal.
func normalize(t testing.TB, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// restoreRepoCRDs runs the documented step at cleanup, so that the tests
// after this one see the repo's CRDs whatever this one left.
func restoreRepoCRDs(t *testing.T, env *framework.Env, crdFile string) {
	t.Helper()
	// A CRD still being deleted (a failure while deleteCRD waited) cannot be
	// updated; it is created again once it is gone.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	framework.WaitFor(t, ctx, 3*time.Minute, "the repo's CRDs are applied", func(ctx context.Context) (bool, error) {
		_, stderr, err := framework.KubectlErr("apply", "--server-side", "--force-conflicts", "-f", crdFile)
		framework.Observef(ctx, "kubectl apply --server-side --force-conflicts: %v %s", err, stderr)
		return err == nil, nil
	})
	checkRepoCRDs(t, env)
}
