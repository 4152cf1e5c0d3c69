//go:build integration

package examples

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// buildManager builds tidb-controller-manager into a temp dir of t (the Go
// build cache makes it quick) and returns its path.
func buildManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tidb-controller-manager")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/controller-manager")
	cmd.Dir = framework.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/controller-manager: %v\n%s", err, out)
	}
	return bin
}

// rendered is the output of `render -f`, by kind and name.
type rendered struct {
	sets map[string]*appsv1.StatefulSet
	cms  map[string]*corev1.ConfigMap
	deps map[string]bool
}

// render runs `tidb-controller-manager render -f path` and decodes what it
// prints; a non-zero exit (invalid spec, builder error) fails the test.
func render(t *testing.T, bin, path string) rendered {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "render", "-f", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("render -f %s: %v\n%s", path, err, stderr.String())
	}
	r := rendered{sets: map[string]*appsv1.StatefulSet{}, cms: map[string]*corev1.ConfigMap{}, deps: map[string]bool{}}
	for _, doc := range strings.Split(stdout.String(), "\n---\n") {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("render output of %s: %v", path, err)
		}
		switch head.Kind {
		case "StatefulSet":
			s := &appsv1.StatefulSet{}
			if err := yaml.UnmarshalStrict([]byte(doc), s); err != nil {
				t.Fatalf("StatefulSet %s: %v", head.Metadata.Name, err)
			}
			r.sets[s.Name] = s
		case "ConfigMap":
			c := &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict([]byte(doc), c); err != nil {
				t.Fatalf("ConfigMap %s: %v", head.Metadata.Name, err)
			}
			r.cms[c.Name] = c
		case "Deployment":
			r.deps[head.Metadata.Name] = true
		}
	}
	return r
}

// TestTidbClusterExamplesRender renders every TidbCluster example through
// defaulting, validation and the operator's builders, and checks what each
// example is there to show.
func TestTidbClusterExamplesRender(t *testing.T) {
	hashed := regexp.MustCompile(`^rolling-pd-[0-9a-f]{7}$`)
	cases := []struct {
		file, tc string
		check    func(t *testing.T, r rendered)
	}{
		{"basic/tidb-cluster.yaml", "basic", func(t *testing.T, r rendered) {
			wantReplicas(t, r, "basic-tikv", 3)
			wantReplicas(t, r, "basic-tidb", 2)
		}},
		{"tls/tidb-cluster.yaml", "tls", func(t *testing.T, r rendered) {
			wantSecretVolume(t, r, "tls-pd", "tls-pd-cluster-secret")
			wantSecretVolume(t, r, "tls-tikv", "tls-tikv-cluster-secret")
			wantSecretVolume(t, r, "tls-tidb", "tls-tidb-cluster-secret")
			wantSecretVolume(t, r, "tls-tidb", "tls-tidb-server-secret")
		}},
		{"storage-volumes/tidb-cluster.yaml", "volumes", func(t *testing.T, r rendered) {
			wantClaims(t, r, "volumes-pd", "pd", "pd-log")
			wantClaims(t, r, "volumes-tikv", "tikv", "tikv-raft", "tikv-log")
			wantClaims(t, r, "volumes-tidb", "tidb-log")
		}},
		{"config-strategies/in-place.yaml", "inplace", func(t *testing.T, r rendered) {
			for _, c := range []string{"inplace-pd", "inplace-tikv", "inplace-tidb"} {
				if r.cms[c] == nil {
					t.Errorf("InPlace: ConfigMap %s (unhashed name) not rendered; got %v", c, keys(r.cms))
				}
			}
		}},
		{"config-strategies/rolling-update.yaml", "rolling", func(t *testing.T, r rendered) {
			found := false
			for name := range r.cms {
				found = found || hashed.MatchString(name)
			}
			if !found || r.cms["rolling-tidb"] == nil {
				t.Errorf("RollingUpdate: want a hashed PD ConfigMap and TiDB's InPlace rolling-tidb; got %v", keys(r.cms))
			}
		}},
		{"scaled/tidb-cluster.yaml", "scaled", func(t *testing.T, r rendered) {
			wantReplicas(t, r, "scaled-tikv", 5)
			wantReplicas(t, r, "scaled-tidb", 3)
		}},
		{"pause/tidb-cluster.yaml", "paused", func(t *testing.T, r rendered) {
			wantReplicas(t, r, "paused-pd", 3)
		}},
	}
	bin := buildManager(t)
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			r := render(t, bin, filepath.Join(framework.RepoRoot(), "examples", c.file))
			for _, comp := range []string{"pd", "tikv", "tidb"} {
				if r.sets[c.tc+"-"+comp] == nil {
					t.Errorf("StatefulSet %s-%s not rendered; got %v", c.tc, comp, keys(r.sets))
				}
			}
			if !r.deps[c.tc+"-discovery"] {
				t.Errorf("Deployment %s-discovery not rendered", c.tc)
			}
			c.check(t, r)
		})
	}
}

func wantReplicas(t *testing.T, r rendered, sts string, n int32) {
	t.Helper()
	if s := r.sets[sts]; s == nil || s.Spec.Replicas == nil || *s.Spec.Replicas != n {
		t.Errorf("StatefulSet %s: want %d replicas, got %+v", sts, n, s)
	}
}

func wantSecretVolume(t *testing.T, r rendered, sts, secret string) {
	t.Helper()
	s := r.sets[sts]
	if s == nil {
		t.Fatalf("StatefulSet %s not rendered", sts)
	}
	for _, v := range s.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			return
		}
	}
	t.Errorf("StatefulSet %s mounts no Secret %s", sts, secret)
}

func wantClaims(t *testing.T, r rendered, sts string, claims ...string) {
	t.Helper()
	s := r.sets[sts]
	if s == nil {
		t.Fatalf("StatefulSet %s not rendered", sts)
	}
	var got []string
	for _, c := range s.Spec.VolumeClaimTemplates {
		got = append(got, c.Name)
	}
	if strings.Join(got, ",") != strings.Join(claims, ",") {
		t.Errorf("StatefulSet %s volumeClaimTemplates = %v, want %v", sts, got, claims)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
