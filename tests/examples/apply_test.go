//go:build integration

package examples

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// wantExamples are the example files this package must find; a missing one
// fails the test, so a renamed example cannot silently drop out of it.
var wantExamples = []string{
	"backup/backup-schedule.yaml", "backup/backup.yaml", "backup/compact-backup.yaml", "backup/restore.yaml", "backup/s3-secret.yaml",
	"basic/tidb-cluster.yaml", "basic-random-password/tidb-cluster.yaml", "config-strategies/in-place.yaml", "config-strategies/rolling-update.yaml",
	"pause/tidb-cluster.yaml", "scaled/tidb-cluster.yaml", "storage-volumes/tidb-cluster.yaml", "sysctl-init/tidb-cluster.yaml",
	"tls/tidb-cluster.yaml", "initialize/init-sql.yaml", "initialize/tidb-cluster.yaml", "initialize/tidb-initializer.yaml",
	"initialize/tidb-secret.yaml", "heterogeneous/tidb-cluster.yaml",
}

// resources maps the kinds used in examples to their API resources.
var resources = map[string]schema.GroupVersionResource{
	"TidbCluster":      v1alpha1.SchemeGroupVersion.WithResource("tidbclusters"),
	"Backup":           v1alpha1.SchemeGroupVersion.WithResource("backups"),
	"Restore":          v1alpha1.SchemeGroupVersion.WithResource("restores"),
	"BackupSchedule":   v1alpha1.SchemeGroupVersion.WithResource("backupschedules"),
	"CompactBackup":    v1alpha1.SchemeGroupVersion.WithResource("compactbackups"),
	"TidbDashboard":    v1alpha1.SchemeGroupVersion.WithResource("tidbdashboards"),
	"TidbNGMonitoring": v1alpha1.SchemeGroupVersion.WithResource("tidbngmonitorings"),
	"DMCluster":        v1alpha1.SchemeGroupVersion.WithResource("dmclusters"),
	"TidbInitializer":  v1alpha1.SchemeGroupVersion.WithResource("tidbinitializers"),
	"TidbMonitor":      v1alpha1.SchemeGroupVersion.WithResource("tidbmonitors"),
	"ConfigMap":        {Version: "v1", Resource: "configmaps"},
	"Secret":           {Version: "v1", Resource: "secrets"},
}

// exampleFiles returns examples/**/*.yaml relative to examples/, sorted,
// and fails unless every file of wantExamples is among them.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(framework.RepoRoot(), "examples")
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk examples/: %v", err)
	}
	sort.Strings(files)
	for _, w := range wantExamples {
		if i := sort.SearchStrings(files, w); i == len(files) || files[i] != w {
			t.Errorf("example %s is missing (found %v)", w, files)
		}
	}
	return files
}

// documents splits a manifest into its YAML documents, as generic maps.
func documents(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no object", path)
	}
	return out
}

// TestExamplesAreAcceptedByTheAPIServer applies each example with strict
// field validation (an unknown or duplicated field fails) and reads every
// object back: each field the file sets must be stored unchanged, so a CRD
// schema that prunes a field fails here.
func TestExamplesAreAcceptedByTheAPIServer(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	for _, rel := range exampleFiles(t) {
		path := filepath.Join(framework.RepoRoot(), "examples", rel)
		t.Run(rel, func(t *testing.T) {
			_, stderr, err := framework.KubectlErr("apply", "--validate=strict", "-n", env.Namespace, "-f", path)
			if err != nil {
				t.Fatalf("API server rejected %s: %v\n%s", rel, err, stderr)
			}
			if strings.Contains(stderr, "Warning") {
				t.Errorf("applying %s printed warnings:\n%s", rel, stderr)
			}
			for _, want := range documents(t, path) {
				checkStored(t, env, rel, want)
			}
		})
	}
}

// checkStored reads the object want describes and reports every field of
// want's spec (or a Secret's keys) that is missing or different.
func checkStored(t *testing.T, env *framework.Env, file string, want map[string]any) {
	t.Helper()
	kind, _ := want["kind"].(string)
	name, _ := want["metadata"].(map[string]any)["name"].(string)
	gvr, ok := resources[kind]
	if !ok {
		t.Fatalf("%s: kind %q has no resource mapping in this test", file, kind)
	}
	got, err := env.Dynamic.Resource(gvr).Namespace(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("%s: get %s %s: %v", file, kind, name, err)
	}
	if kind == "Secret" {
		// stringData is write-only: the API server moves it into data.
		data, _ := got.Object["data"].(map[string]any)
		for k := range want["stringData"].(map[string]any) {
			if _, ok := data[k]; !ok {
				t.Errorf("%s: Secret %s lost key %s", file, name, k)
			}
		}
		return
	}
	for _, d := range subsetDiff(normalize(t, want["spec"]), normalize(t, got.Object["spec"]), "spec") {
		t.Errorf("%s: %s %s: %s", file, kind, name, d)
	}
}

// normalize round-trips v through JSON so numbers compare as float64
// whichever decoder produced them.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// subsetDiff lists where got lacks or changes something want has; fields
// only got has (server defaults) are fine.
func subsetDiff(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: stored %T, want an object", path, got)}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s was pruned", path, k))
				continue
			}
			out = append(out, subsetDiff(wv, gv, path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: stored %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, subsetDiff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: stored %v, want %v", path, got, want)}
		}
		return nil
	}
}

// TestPausedExampleCreatesNothing runs the operator on examples/pause: the
// cluster is observed (Progressing=False, reason Paused) and no child object
// is created, until it is resumed.
func TestPausedExampleCreatesNothing(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, func(o *app.Options) { o.LeaderElect = false })
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "pause", "tidb-cluster.yaml"), env.Namespace)

	framework.WaitFor(t, env.Ctx, time.Minute, "paused cluster reported Paused", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "paused", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterProgressing)
		framework.Observef(ctx, "progressing=%+v", c)
		return c != nil && c.Reason == "Paused" && c.ObservedGeneration == tc.Generation, nil
	})
	sets, err := env.Kube.AppsV1().StatefulSets(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := env.Kube.AppsV1().Deployments(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sets.Items)+len(deps.Items) != 0 {
		t.Errorf("a paused cluster got %d StatefulSets and %d Deployments", len(sets.Items), len(deps.Items))
	}

	framework.Kubectl(t, "-n", env.Namespace, "patch", "tc", "paused", "--type", "merge", "-p", `{"spec":{"paused":false}}`)
	framework.WaitFor(t, env.Ctx, time.Minute, "resumed cluster gets its discovery and PD", func(ctx context.Context) (bool, error) {
		_, errD := env.Kube.AppsV1().Deployments(env.Namespace).Get(ctx, "paused-discovery", metav1.GetOptions{})
		_, errP := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, "paused-pd", metav1.GetOptions{})
		framework.Observef(ctx, "discovery: %v, pd: %v", errD, errP)
		return errD == nil && errP == nil, nil
	})
}
