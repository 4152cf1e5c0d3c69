package app

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// renderFiles concatenates files into one input and renders it in
// namespace demo; it returns the output, the errors and the exit code.
func renderFiles(t *testing.T, files ...string) (string, string, int) {
	t.Helper()
	var in bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in.WriteString("\n---\n")
		in.Write(b)
	}
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := renderMain([]string{"-f", path, "-namespace", "demo", "-tidb-backup-manager-image", "op:v1"}, &out, &errOut)
	return out.String(), errOut.String(), code
}

// kindsAndNames lists "Kind/name" of each rendered object, in order.
func kindsAndNames(out string) []string {
	var got []string
	for _, doc := range strings.Split(out, "\n---\n") {
		kind := regexp.MustCompile(`(?m)^kind: (\w+)$`).FindStringSubmatch(doc)
		name := regexp.MustCompile(`(?m)^  name: (\S+)$`).FindStringSubmatch(doc)
		if kind != nil && name != nil {
			got = append(got, kind[1]+"/"+name[1])
		}
	}
	return got
}

// TestRenderMonitorDashboardNGMonitoringInitializer renders the examples of
// the four other kinds with their clusters: each object their controllers
// write appears after the clusters', by the names the controllers give.
func TestRenderMonitorDashboardNGMonitoringInitializer(t *testing.T) {
	t.Parallel()
	out, errOut, code := renderFiles(t, "../../../examples/basic/tidb-cluster.yaml", "../../../examples/basic/tidb-monitor.yaml",
		"../../../examples/basic/tidb-dashboard.yaml", "../../../examples/tngm/tidb-ng-monitoring.yaml",
		"../../../examples/initialize/tidb-cluster.yaml", "../../../examples/initialize/tidb-initializer.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := strings.Join(kindsAndNames(out), " ")
	for _, want := range []string{
		"ServiceAccount/basic-monitor Role/basic-monitor RoleBinding/basic-monitor ConfigMap/basic-monitor ConfigMap/basic-monitor-grafana",
		"StatefulSet/basic-monitor",
		"Service/basic-tidb-dashboard-exposed StatefulSet/basic-tidb-dashboard",
		"ConfigMap/basic-ng-monitoring StatefulSet/basic-ng-monitoring",
		"Job/initialize-demo-tidb-initializer",
		"StatefulSet/initialize-demo-tidb",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered objects lack %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "StatefulSet/initialize-demo-tidb") > strings.Index(got, "ServiceAccount/basic-monitor") {
		t.Errorf("the clusters' objects must come first:\n%s", got)
	}
	for _, want := range []string{"job_name: demo/basic/pd", "image: op:v1", "--pd=http://basic-pd.demo:2379"} {
		if !strings.Contains(out, want) {
			t.Errorf("render output lacks %q", want)
		}
	}
}

// TestRenderNamesAMissingCluster checks that a dashboard or initializer
// whose TidbCluster the input lacks is refused with the cluster named, and
// an invalid monitor with its reason; nothing is printed.
func TestRenderNamesAMissingCluster(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]string{
		"../../../examples/basic/tidb-dashboard.yaml":        "TidbDashboard basic: its TidbCluster demo/basic is not in the input",
		"../../../examples/initialize/tidb-initializer.yaml": "TidbInitializer initialize-demo: its TidbCluster demo/initialize-demo is not in the input",
		"../../../examples/tngm/tidb-ng-monitoring.yaml":     "TidbNGMonitoring",
	} {
		out, errOut, code := renderFiles(t, file)
		if code != 1 || !strings.Contains(errOut, want) || out != "" {
			t.Errorf("%s: exit %d, output %d bytes, error %q; want exit 1, no output and %q", file, code, len(out), errOut, want)
		}
	}
	path := filepath.Join(t.TempDir(), "tm.yaml")
	if err := os.WriteFile(path, []byte("apiVersion: pingcap.com/v1alpha1\nkind: TidbMonitor\nmetadata: {name: m}\nspec: {clusters: []}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := renderMain([]string{"-f", path}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "spec.clusters names no TidbCluster") {
		t.Errorf("invalid monitor: exit %d, error %q", code, errOut.String())
	}
}

// TestRenderDirectory renders examples/basic as a directory: its cluster,
// monitor and dashboard.
func TestRenderDirectory(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := renderMain([]string{"-f", "../../../examples/basic", "-namespace", "demo"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := strings.Join(kindsAndNames(out.String()), " ")
	for _, want := range []string{"StatefulSet/basic-tikv", "StatefulSet/basic-monitor", "StatefulSet/basic-tidb-dashboard"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered objects lack %s:\n%s", want, got)
		}
	}
}
