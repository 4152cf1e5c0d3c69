//go:build integration

package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func TestExplainDocumentsFields(t *testing.T) {
	operator.InstallCRDs(t)
	// The API server publishes a new CRD's OpenAPI and discovery shortly
	// after it is Established, so poll until kubectl sees it.
	framework.WaitFor(t, context.Background(), time.Minute, "kubectl explain documents spec.tikv", func(ctx context.Context) (bool, error) {
		out, stderr, err := framework.KubectlErr("explain", "tidbcluster.spec.tikv")
		framework.Observef(ctx, "explain: %v %s", err, stderr)
		if err != nil {
			return false, nil
		}
		for _, want := range []string{"evictLeaderTimeout", "replicas", "leaders to leave a store"} {
			if !strings.Contains(out, want) {
				framework.Observef(ctx, "explain lacks %q:\n%s", want, out)
				return false, nil
			}
		}
		return true, nil
	})
	framework.WaitFor(t, context.Background(), time.Minute, "short names tc, bk, rt, bks", func(ctx context.Context) (bool, error) {
		out, _, err := framework.KubectlErr("api-resources", "--api-group=pingcap.com", "-o", "wide")
		for _, want := range []string{"tc ", "bk ", "rt ", "bks "} {
			if err != nil || !strings.Contains(out, want) {
				framework.Observef(ctx, "api-resources lacks %q: %v\n%s", strings.TrimSpace(want), err, out)
				return false, nil
			}
		}
		return true, nil
	})
}

func TestTiDBOperatorYAMLAppliesUnchanged(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	for _, f := range []string{
		filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"),
		filepath.Join("testdata", "tidb-operator-style.yaml"),
	} {
		framework.ApplyYAMLFile(t, env.Ctx, f, env.Namespace)
	}
	pc := versioned.NewForConfigOrDie(env.Config)
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "advanced", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Pass-through fields are kept, not pruned, and both config forms survive.
	if tc.Spec.PD.Affinity == nil || tc.Spec.PD.Affinity.PodAntiAffinity == nil {
		t.Errorf("pd.affinity was pruned: %+v", tc.Spec.PD.Affinity)
	}
	if got := tc.Spec.PD.Config.Items["replication"]; got == nil {
		t.Errorf("PD TOML config lost: %+v", tc.Spec.PD.Config)
	}
	if got := tc.Spec.TiDB.Config.Items["log"]; got == nil {
		t.Errorf("TiDB map config lost: %+v", tc.Spec.TiDB.Config)
	}
	if len(tc.Spec.TiDB.AdditionalContainers) != 1 || tc.Spec.TiDB.AdditionalContainers[0].Lifecycle == nil {
		t.Errorf("additionalContainers pruned: %+v", tc.Spec.TiDB.AdditionalContainers)
	}
	if tc.Spec.TiKV.WaitLeaderTransferBackTimeout == nil || tc.Spec.TiKV.WaitLeaderTransferBackTimeout.Minutes() != 5 {
		t.Errorf("waitLeaderTransferBackTimeout = %v", tc.Spec.TiKV.WaitLeaderTransferBackTimeout)
	}
	out := framework.Kubectl(t, "get", "tc", "-n", env.Namespace)
	for _, col := range []string{"READY", "PD", "PD-DESIRED", "TIKV", "TIKV-DESIRED", "TIDB", "TIDB-DESIRED", "AGE"} {
		if !strings.Contains(out, col) {
			t.Errorf("kubectl get tc lacks column %s:\n%s", col, out)
		}
	}
	if !strings.Contains(out, "basic") || !strings.Contains(out, "advanced") {
		t.Errorf("kubectl get tc lacks the clusters:\n%s", out)
	}
}

func TestInvalidObjectsAreRejected(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	cases := []struct {
		name, spec, wantMsg string
	}{
		{"negative replicas", "pd: {replicas: -1}", "spec.pd.replicas"},
		{"unknown enum", "configUpdateStrategy: Sometimes", `Unsupported value: "Sometimes"`},
		{"wrong type", `tikv: {replicas: "three"}`, "spec.tikv.replicas"},
		{"unknown field", "pd: {replicas: 1, replica: 3}", `unknown field "spec.pd.replica"`},
		{"bad probe type", "tidb: {replicas: 1, readinessProbe: {type: http}}", "spec.tidb.readinessProbe.type"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			manifest := "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: bad}\nspec: {" + tt.spec + "}\n"
			path := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
				t.Fatal(err)
			}
			_, stderr, err := framework.KubectlErr("apply", "-f", path, "--namespace", env.Namespace)
			if err == nil {
				t.Fatalf("apiserver accepted %q", tt.spec)
			}
			if !strings.Contains(stderr, tt.wantMsg) {
				t.Fatalf("error does not name the problem %q:\n%s", tt.wantMsg, stderr)
			}
		})
	}
}
