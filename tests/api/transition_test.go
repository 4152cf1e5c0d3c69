//go:build integration

package api

import (
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// transitions are the update rules of the CRDs (CEL rules on oldSelf):
// create is accepted, forbidden is then refused naming wantPath with
// wantMsg, and allowed, applied after the refusal, is accepted.
var transitions = []struct {
	name, create, forbidden, allowed, wantPath, wantMsg string
}{
	{
		name:      "bootstrap SQL changed",
		create:    pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: init-sql}",
		forbidden: pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: other-sql}",
		allowed:   pd + ", tidb: {replicas: 2}", // removed
		wantPath:  "spec.tidb.bootstrapSQLConfigMapName",
		wantMsg:   validation.MsgBootstrapSQLChanged, // the operator's own check says the same
	},
	{
		name:      "version emptied",
		create:    pd + ", version: v8.5.0",
		forbidden: pd,
		allowed:   pd + ", version: v8.5.1",
		wantPath:  "spec.version",
		wantMsg:   "spec.version may not be emptied once set",
	},
	{
		name:      "version set to the empty string",
		create:    pd + ", version: v8.5.0",
		forbidden: pd + ", version: ''",
		allowed:   pd + ", version: v8.5.0, tidb: {replicas: 1}",
		wantPath:  "spec.version",
		wantMsg:   "spec.version may not be emptied once set",
	},
	{
		name:      "pd baseImage emptied",
		create:    "pd: {replicas: 1, requests: {storage: 1Gi}, baseImage: pingcap/pd}",
		forbidden: pd,
		allowed:   "pd: {replicas: 1, requests: {storage: 1Gi}, baseImage: registry.example/pd}",
		wantPath:  "spec.pd.baseImage",
		wantMsg:   "spec.pd.baseImage may not be emptied once set",
	},
	{
		name:      "tikv baseImage emptied",
		create:    pd + ", tikv: {replicas: 1, requests: {storage: 1Gi}, baseImage: pingcap/tikv}",
		forbidden: pd + ", tikv: {replicas: 1, requests: {storage: 1Gi}, baseImage: ''}",
		allowed:   pd, // the whole component removed
		wantPath:  "spec.tikv.baseImage",
		wantMsg:   "spec.tikv.baseImage may not be emptied once set",
	},
	{
		name:      "tidb baseImage emptied",
		create:    pd + ", tidb: {replicas: 1, baseImage: pingcap/tidb}",
		forbidden: pd + ", tidb: {replicas: 1}",
		allowed:   pd + ", tidb: {replicas: 3, baseImage: pingcap/tidb}",
		wantPath:  "spec.tidb.baseImage",
		wantMsg:   "spec.tidb.baseImage may not be emptied once set",
	},
}

// acceptedTransitions are updates no update rule refuses: a bootstrap SQL
// set on an existing cluster, from the empty string or to the same name,
// and a version or image changed rather than emptied.
var acceptedTransitions = []struct{ name, create, update string }{
	{"bootstrap SQL set later", pd + ", tidb: {replicas: 1}", pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: init-sql}"},
	{"bootstrap SQL set from empty", pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: ''}",
		pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: init-sql}"},
	{"bootstrap SQL emptied", pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: init-sql}",
		pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: ''}"},
	{"bootstrap SQL kept", pd + ", tidb: {replicas: 1, bootstrapSQLConfigMapName: init-sql}",
		pd + ", tidb: {replicas: 3, bootstrapSQLConfigMapName: init-sql}"},
	{"version set later", pd, pd + ", version: v8.5.0"},
	{"images set later", pd + ", tidb: {replicas: 1}", "pd: {replicas: 1, requests: {storage: 1Gi}, baseImage: pingcap/pd}, tidb: {replicas: 1, baseImage: pingcap/tidb}"},
	{"components added and removed", "pd: {replicas: 1, requests: {storage: 1Gi}, baseImage: pingcap/pd}, version: v8.5.0",
		"tikv: {replicas: 1, requests: {storage: 1Gi}, baseImage: pingcap/tikv}, pdAddresses: ['http://pd.example:2379'], version: v8.5.0"},
}

// TestAdmissionTransitions applies each transition's objects in turn with
// `kubectl apply`, as a user editing one manifest would.
func TestAdmissionTransitions(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	for i, tt := range transitions {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "transition-" + string(rune('a'+i))
			if stderr, err := applyManifest(t, tcYAML(name, tt.create), env.Namespace); err != nil {
				t.Fatalf("the API server refused the create:\n%s\n%v\n%s", tt.create, err, stderr)
			}
			stderr, err := applyManifest(t, tcYAML(name, tt.forbidden), env.Namespace)
			if err == nil {
				t.Fatalf("the API server accepted the update:\n%s", tt.forbidden)
			}
			if !strings.Contains(stderr, tt.wantPath+": ") || !strings.Contains(stderr, tt.wantMsg) {
				t.Fatalf("the answer does not name %s with %q:\n%s", tt.wantPath, tt.wantMsg, stderr)
			}
			if stderr, err := applyManifest(t, tcYAML(name, tt.allowed), env.Namespace); err != nil {
				t.Fatalf("the API server refused the allowed update:\n%s\n%v\n%s", tt.allowed, err, stderr)
			}
		})
	}
	for i, tt := range acceptedTransitions {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "accepted-" + string(rune('a'+i))
			for _, spec := range []string{tt.create, tt.update} {
				if stderr, err := applyManifest(t, tcYAML(name, spec), env.Namespace); err != nil {
					t.Fatalf("the API server refused:\n%s\n%v\n%s", spec, err, stderr)
				}
			}
		})
	}
}
