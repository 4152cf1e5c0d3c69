package app

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestRenderBasicExample(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := renderMain([]string{"-f", "../../../examples/basic/tidb-cluster.yaml", "-namespace", "demo"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	kinds := regexp.MustCompile(`(?m)^kind: (\w+)$`).FindAllStringSubmatch(out.String(), -1)
	var got []string
	for _, k := range kinds {
		got = append(got, k[1])
	}
	want := "ServiceAccount Role RoleBinding Service Deployment Service Service ConfigMap StatefulSet " +
		"Service ConfigMap StatefulSet Service Service ConfigMap StatefulSet"
	if strings.Join(got, " ") != want {
		t.Fatalf("kinds:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	for _, name := range []string{"name: basic-pd-peer", "name: basic-tikv-peer", "name: basic-tidb-peer", "namespace: demo", "partition: 3"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("render output lacks %q", name)
		}
	}
}

func TestRenderRejectsInvalidSpec(t *testing.T) {
	t.Parallel()
	const head = "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: x}\n"
	for spec, want := range map[string]string{
		"spec: {pd: {replicas: 1}}\n": "spec.pd.requests.storage",
		"spec: {pd: {replicas: 1, requests: {storage: 1Gi}, config: 'a = = b'}}\n":                     "spec.pd.config",
		"spec: {pd: {replicas: 1, requests: {storage: 1Gi}, podSecurityContext: {runAsUser: root}}}\n": "spec.pd.podSecurityContext.runAsUser",
		"spec: {pd: {replicas: 1, requests: {storage: 1Gi}, replicaz: 3}}\n":                           `unknown field "replicaz"`,
	} {
		path := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(path, []byte(head+spec), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if code := renderMain([]string{"-f", path}, &out, &errOut); code != 1 {
			t.Fatalf("%s: exit %d, want 1", spec, code)
		}
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("%s: error does not name %s: %s", spec, want, errOut.String())
		}
		if out.Len() != 0 {
			t.Errorf("%s: nothing may be printed for an invalid spec, got %s", spec, out.String())
		}
	}
}
