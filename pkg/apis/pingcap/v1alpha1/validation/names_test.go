package validation

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// crdSchema reads the generated CRD of a plural resource and returns its
// openAPIV3Schema.
func crdSchema(t *testing.T, plural string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "manifests", "crd", "pingcap.com_"+plural+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%s: want one version, got %d", plural, len(crd.Spec.Versions))
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// child walks properties (and, for "[]", array items) of a schema.
func child(t *testing.T, schema map[string]any, path ...string) map[string]any {
	t.Helper()
	node := schema
	for _, p := range path {
		var next any
		if p == "[]" {
			next = node["items"]
		} else if props, ok := node["properties"].(map[string]any); ok {
			next = props[p]
		}
		m, ok := next.(map[string]any)
		if !ok {
			t.Fatalf("schema has no %s", strings.Join(path, "."))
		}
		node = m
	}
	return node
}

// TestClusterNameLimitsMatchCRD proves that the CEL rules on the TidbCluster
// CRD are exactly the Go limits: one rule per clusterNameLimit, with the
// same number and message, the format rule, and nothing else reading the
// name. It also checks the replicas ceiling of every component.
func TestClusterNameLimitsMatchCRD(t *testing.T) {
	t.Parallel()
	schema := crdSchema(t, "tidbclusters")
	rules := map[string]string{}
	nameRules := 0
	list, _ := schema["x-kubernetes-validations"].([]any)
	for _, r := range list {
		m := r.(map[string]any)
		rule, _ := m["rule"].(string)
		msg, _ := m["message"].(string)
		rules[rule] = msg
		if strings.Contains(rule, "self.metadata.name") {
			nameRules++
			// The API server then answers "metadata: Invalid value: ...", not "<nil>: ...".
			if m["fieldPath"] != ".metadata" {
				t.Errorf("rule %q: fieldPath %v, want .metadata", rule, m["fieldPath"])
			}
		}
	}
	if got, want := rules[clusterNameFormatRule], "metadata.name "+clusterNameFormatMessage; got != want {
		t.Errorf("format rule %q: message %q, want %q", clusterNameFormatRule, got, want)
	}
	for _, l := range clusterNameLimits {
		msg, ok := rules[l.rule()]
		if !ok {
			t.Errorf("CRD lacks the rule %q for %s", l.rule(), l.component)
			continue
		}
		if want := "metadata.name " + l.message(); msg != want {
			t.Errorf("rule %q: message %q, want %q", l.rule(), msg, want)
		}
	}
	if want := len(clusterNameLimits) + 1; nameRules != want {
		t.Errorf("CRD has %d rules on metadata.name, want %d (one per clusterNameLimit and the format rule)", nameRules, want)
	}

	for _, path := range [][]string{
		{"spec", "pd"}, {"spec", "tikv"}, {"spec", "tidb"}, {"spec", "tiflash"}, {"spec", "ticdc"},
		{"spec", "pump"}, {"spec", "tiproxy"}, {"spec", "pdms", "[]"},
	} {
		replicas := child(t, schema, append(path, "replicas")...)
		if replicas["maximum"] != float64(MaxReplicas) || replicas["minimum"] != float64(0) {
			t.Errorf("%s.replicas: minimum %v, maximum %v; want 0 and %d",
				strings.Join(path, "."), replicas["minimum"], replicas["maximum"], MaxReplicas)
		}
	}
}

// derivedNames returns the names the operator derives from tc for the
// object of limit l, by the rules of pkg/names: the StatefulSet, its pods'
// controller-revision-hash label value (longest hash), the pod with the
// highest possible ordinal and the headless Service; or the Service.
func derivedNames(l clusterNameLimit, tc string) (labels, dnsLabels []string) {
	if l.object == "Service" {
		return nil, []string{names.Member(tc, l.member)}
	}
	sts := names.Member(tc, l.member)
	pod := names.Pod(tc, l.member, math.MaxInt32)
	revision := sts + "-" + strings.Repeat("9", revisionHashLength)
	return []string{revision, pod}, []string{names.Peer(tc, l.member), pod}
}

// TestClusterNameLimitsBuildValidNames proves each limit is tight: a name
// exactly at the limit yields valid object names, one character more does not.
func TestClusterNameLimitsBuildValidNames(t *testing.T) {
	t.Parallel()
	for _, l := range clusterNameLimits {
		t.Run(l.component, func(t *testing.T) {
			t.Parallel()
			invalid := func(tc string) []string {
				var problems []string
				labels, dnsLabels := derivedNames(l, tc)
				for _, v := range labels {
					problems = append(problems, validation.IsValidLabelValue(v)...)
				}
				for _, v := range dnsLabels {
					problems = append(problems, validation.IsDNS1035Label(v)...)
				}
				return problems
			}
			atLimit := "a" + strings.Repeat("b", l.max-1)
			if problems := invalid(atLimit); len(problems) > 0 {
				t.Errorf("name of %d characters (the limit): %v", l.max, problems)
			}
			if problems := invalid(atLimit + "c"); len(problems) == 0 {
				t.Errorf("name of %d characters (limit+1) builds only valid names: the limit is not tight", l.max+1)
			}
		})
	}
}

func TestValidateClusterName(t *testing.T) {
	t.Parallel()
	withAll := &v1alpha1.TidbClusterSpec{
		PD: &v1alpha1.PDSpec{}, TiKV: &v1alpha1.TiKVSpec{}, TiDB: &v1alpha1.TiDBSpec{},
		PDMS: []*v1alpha1.PDMSSpec{nil, {Name: "scheduling"}},
	}
	cases := []struct {
		name     string
		tc       string
		spec     *v1alpha1.TidbClusterSpec
		wantErrs int
	}{
		{"unnamed", "", withAll, 0},
		{"nil spec", strings.Repeat("a", 63), nil, 0},
		{"no components, 63 characters", strings.Repeat("a", 63), &v1alpha1.TidbClusterSpec{}, 0},
		{"64 characters", strings.Repeat("a", 64), &v1alpha1.TidbClusterSpec{}, 1},
		{"starts with a digit", "1db", &v1alpha1.TidbClusterSpec{}, 1},
		{"has a dot", "db.x", &v1alpha1.TidbClusterSpec{}, 1},
		{"pd at the limit", strings.Repeat("a", MaxClusterNameWithPD), &v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{}}, 0},
		{"pd over the limit", strings.Repeat("a", MaxClusterNameWithPD+1), &v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{}}, 1},
		{"scheduling at its limit", strings.Repeat("a", MaxClusterNameWithScheduling), withAll, 0},
		{"scheduling over its limit", strings.Repeat("a", MaxClusterNameWithScheduling+1), withAll, 1},
		{"over every limit of the spec", strings.Repeat("a", 50), withAll, 4},
		{"acrossK8s over the discovery limit", strings.Repeat("a", 54), &v1alpha1.TidbClusterSpec{AcrossK8s: true}, 1},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidateClusterName(tt.tc, tt.spec)
			if len(errs) != tt.wantErrs {
				t.Fatalf("got %d errors, want %d: %v", len(errs), tt.wantErrs, errs)
			}
			for _, err := range errs {
				if err.Field != "metadata.name" {
					t.Errorf("error on %s, want metadata.name: %v", err.Field, err)
				}
			}
		})
	}
}

// TestValidateTidbClusterChecksName proves the name check runs with the others.
func TestValidateTidbClusterChecksName(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Name = strings.Repeat("a", MaxClusterNameLength+1)
	errs := ValidateTidbCluster(tc)
	if len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Fatalf("want one error on metadata.name, got %v", errs)
	}
}
