// Package v1objects writes the objects the TiDB Operator v1.6 lays out for a TidbCluster (from
// tests/v1layout's templates) into a test namespace, for the takeover tests (test support only).
package v1objects

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/v1layout"
)

// The layout the TiDB Operator v1.6 leaves for a cluster (spec §3.2-3.5,
// §4): for each object our operator builds, the differences v1 has for the
// same TidbCluster — ConfigMaps named by the hash of v1's own data, with
// v1's start scripts (other shell, other variable names, the same server
// command line) and its TOML formatting (TiProxy's keeps its name: v1
// updates it in place); the pod templates as v1 builds them
// (v1layout.PodTemplate: variables in v1's order, TiFlash's containers in
// v1's order with v1's tailer and init commands, TiCDC's, Pump's and
// TiProxy's containers as v1 builds them); the JSON of the last applied spec in pingcap.com/
// last-applied-configuration on StatefulSets and Services, and of the pod
// template in pingcap.com/last-applied-podtemplate on the discovery
// Deployment, which runs the operator image v1 ships discovery in;
// tidb.pingcap.com/owner-generation on StatefulSets; a controller reference
// to the TidbCluster on everything. The objects are written with plain
// client calls while no operator runs.

// v1DiscoveryImage is the image v1.6 runs discovery from.
const v1DiscoveryImage = "pingcap/tidb-operator:v1.6.1"

// Create writes tc's objects of the components comps (discovery
// included by name) as v1.6 lays them out; tc must exist (its UID is the
// owner). It fails t when an object cannot be built or created.
func Create(t *testing.T, env *framework.Env, tc *v1alpha1.TidbCluster, comps ...string) {
	t.Helper()
	d := tc.DeepCopy()
	defaulting.SetTidbClusterDefaults(d)
	owner := *metav1.NewControllerRef(tc, v1alpha1.SchemeGroupVersion.WithKind("TidbCluster"))
	cmNames := map[string]string{}
	for _, m := range members.New(&component.Env{DiscoveryImage: v1DiscoveryImage}) {
		r, ok := m.(interface {
			Desired(*v1alpha1.TidbCluster) ([]metav1.Object, error)
		})
		if !ok || !slices.Contains(comps, m.Name()) {
			continue
		}
		objs, err := r.Desired(d)
		if err != nil {
			t.Fatalf("build %s: %v", m.Name(), err)
		}
		for _, o := range objs {
			o.SetOwnerReferences([]metav1.OwnerReference{owner})
			createV1Object(t, env, d, m.Name(), o, cmNames)
		}
	}
}

// createV1Object turns one of our objects into v1's and creates it.
// ConfigMaps come before their StatefulSet, so cmNames maps our name to v1's.
func createV1Object(t *testing.T, env *framework.Env, tc *v1alpha1.TidbCluster, comp string, o metav1.Object, cmNames map[string]string) {
	t.Helper()
	ctx, ns := env.Ctx, env.Namespace
	o.SetNamespace(ns)
	var err error
	switch obj := o.(type) {
	case *corev1.ServiceAccount:
		_, err = env.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, obj, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = env.Kube.RbacV1().Roles(ns).Create(ctx, obj, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		obj.Subjects[0].Namespace = ns
		_, err = env.Kube.RbacV1().RoleBindings(ns).Create(ctx, obj, metav1.CreateOptions{})
	case *corev1.Service:
		setAnnotation(obj, label.AnnLastAppliedConfig, mustJSON(t, obj.Spec))
		_, err = env.Kube.CoreV1().Services(ns).Create(ctx, obj, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		ours := obj.Name
		obj.Data = v1ConfigData(t, comp, obj.Data)
		if script, ok := obj.Data[component.StartScriptKey]; ok {
			obj.Data[component.StartScriptKey] = strings.ReplaceAll(script, "{{namespace}}", ns)
		}
		if comp != "tiproxy" { // v1 updates TiProxy's ConfigMap in place: no hashed name
			obj.Name = fmt.Sprintf("basic-%s-%s", comp, v1DataHash(t, obj.Data))
		}
		cmNames[ours] = obj.Name
		_, err = env.Kube.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{})
	case *appsv1.StatefulSet:
		v1layout.PodTemplate(tc, comp, &obj.Spec.Template, cmNames)
		setAnnotation(obj, label.AnnLastAppliedConfig, mustJSON(t, obj.Spec))
		setAnnotation(obj, "tidb.pingcap.com/owner-generation", "1")
		_, err = env.Kube.AppsV1().StatefulSets(ns).Create(ctx, obj, metav1.CreateOptions{})
	case *appsv1.Deployment:
		v1layout.PodTemplate(tc, comp, &obj.Spec.Template, cmNames)
		setAnnotation(obj, label.AnnLastAppliedPodTemplate, mustJSON(t, obj.Spec.Template.Spec))
		_, err = env.Kube.AppsV1().Deployments(ns).Create(ctx, obj, metav1.CreateOptions{})
	default:
		t.Fatalf("v1 layout: unexpected %T %s", o, o.GetName())
	}
	if err != nil {
		t.Fatalf("create v1's %T %s: %v", o, o.GetName(), err)
	}
}

// v1ConfigData is v1's ConfigMap data for ours: the same settings in
// another TOML layout and v1's start script.
func v1ConfigData(t *testing.T, comp string, ours map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range ours {
		out[k] = v
	}
	for k, cfg := range ours {
		if k != component.ConfigFileKey && k != "pump-config" && !strings.HasSuffix(k, ".toml") {
			continue
		}
		var m map[string]any
		if err := toml.Unmarshal([]byte(cfg), &m); err != nil {
			t.Fatalf("%s %s: %v", comp, k, err)
		}
		b, err := toml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = "\n" + string(b) + "\n"
	}
	if _, ok := ours[component.StartScriptKey]; ok {
		out[component.StartScriptKey] = v1StartScripts[comp]
	}
	return out
}

// v1DataHash names a ConfigMap as v1 does: 7 hex digits of the sha256 of
// the data's JSON.
func v1DataHash(t *testing.T, data map[string]string) string {
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:7]
}

func setAnnotation(o metav1.Object, k, v string) {
	ann := o.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[k] = v
	o.SetAnnotations(ann)
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
