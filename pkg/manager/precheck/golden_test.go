package precheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestGoldenObjectsPass decodes every object the member managers' golden
// tests record (pkg/manager/*/testdata/*.golden.yaml: what the operator
// really writes) and asserts that the precheck finds nothing wrong with
// them, because a precheck that rejects the operator's own objects would
// stop every sync.
func TestGoldenObjectsPass(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "*", "testdata", "*.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d golden files: %v", len(files), files)
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(file)))+"/"+filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			objs := decodeGolden(t, string(data))
			if len(objs) == 0 {
				t.Fatal("no objects decoded")
			}
			for _, o := range objs {
				if errs := Object(o); len(errs) > 0 {
					t.Errorf("%T %s: %v", o, o.GetName(), errs.ToAggregate())
				}
			}
		})
	}
}

// decodeGolden splits a golden file into documents and decodes each into
// the type its shape reveals, since golden files carry no kind: a
// Role has rules, a RoleBinding a roleRef, a ConfigMap has data and no
// spec (a ServiceAccount, metadata alone, decodes as one too), a workload has spec.template (a
// StatefulSet also a serviceName or claim templates), anything else with a
// spec is a Service; a document without metadata is bare ConfigMap data.
// Decoding is strict so that a wrong guess fails.
func decodeGolden(t *testing.T, data string) []metav1.Object {
	t.Helper()
	var out []metav1.Object
	for _, doc := range strings.Split(data, "---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var shape struct {
			Metadata map[string]any `json:"metadata"`
			Spec     map[string]any `json:"spec"`
			Rules    []any          `json:"rules"`
			RoleRef  map[string]any `json:"roleRef"`
		}
		if err := yaml.Unmarshal([]byte(doc), &shape); err != nil {
			t.Fatalf("parse: %v", err)
		}
		var obj metav1.Object
		switch {
		case shape.Metadata == nil:
			// The PD golden files record the ConfigMap's data alone.
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "golden-data", Namespace: "ns"}}
			if err := yaml.UnmarshalStrict([]byte(doc), &cm.Data); err != nil {
				t.Fatalf("decode ConfigMap data: %v", err)
			}
			out = append(out, cm)
			continue
		case shape.Rules != nil:
			obj = &rbacv1.Role{}
		case shape.RoleRef != nil:
			obj = &rbacv1.RoleBinding{}
		case shape.Spec == nil:
			obj = &corev1.ConfigMap{}
		case shape.Spec["template"] != nil && (shape.Spec["serviceName"] != nil || shape.Spec["volumeClaimTemplates"] != nil):
			obj = &appsv1.StatefulSet{}
		case shape.Spec["template"] != nil:
			obj = &appsv1.Deployment{}
		default:
			obj = &corev1.Service{}
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("decode as %T: %v", obj, err)
		}
		out = append(out, obj)
	}
	return out
}
