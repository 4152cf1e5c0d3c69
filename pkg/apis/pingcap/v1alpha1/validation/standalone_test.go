package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestValidateStandaloneImage(t *testing.T) {
	t.Parallel()
	v := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		cs   v1alpha1.ComponentSpec
		base string
		want string
	}{
		{"defaults", v1alpha1.ComponentSpec{}, "", ""},
		{"valid", v1alpha1.ComponentSpec{Version: v("v8.5.0")}, "registry.example:5000/pingcap/tidb-dashboard", ""},
		{"base with a space and two tags", v1alpha1.ComponentSpec{}, "pingcap/tidb dashboard:v1:v2", "spec.baseImage"},
		{"image two tags", v1alpha1.ComponentSpec{Image: "pingcap/x:v1:v2"}, "", "spec.image"},
		{"version not a tag", v1alpha1.ComponentSpec{Version: v("v8 5")}, "", "spec.version"},
	} {
		errs := ValidateStandaloneImage(&tc.cs, tc.base, field.NewPath("spec"))
		got := errs.ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: %v", tc.name, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error naming %s", tc.name, got, tc.want)
		}
	}
}

func TestValidateBaseImageVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base, version, want string
	}{
		{"", "", ""},
		{"prom/prometheus", "v2.27.1", ""},
		{"prom/prom etheus:v1:v2", "v2.27.1", "spec.prometheus.baseImage"},
		{"grafana/grafana", "7.5.11:latest", "spec.prometheus.version"},
	} {
		got := ValidateBaseImageVersion(tc.base, tc.version, field.NewPath("spec", "prometheus")).ToAggregate()
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%q %q: %v", tc.base, tc.version, got)
		case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
			t.Errorf("%q %q: got %v, want an error naming %s", tc.base, tc.version, got, tc.want)
		}
	}
}
