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
	path := filepath.Join(t.TempDir(), "bad.yaml")
	bad := "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: x}\nspec: {pd: {replicas: 1}}\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := renderMain([]string{"-f", path}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(errOut.String(), "spec.pd.requests.storage") {
		t.Fatalf("error does not name the field: %s", errOut.String())
	}
	if out.Len() != 0 {
		t.Fatalf("nothing may be printed for an invalid spec, got %s", out.String())
	}
}
