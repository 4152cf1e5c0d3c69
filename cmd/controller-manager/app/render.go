package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
)

// renderMain implements `tidb-controller-manager render -f tc.yaml`: it
// prints, as YAML, every object the operator would create for each
// TidbCluster in the file, then for each TidbMonitor, TidbDashboard,
// TidbNGMonitoring and TidbInitializer, offline, with the operator's own
// builders.
func renderMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "YAML file of TidbClusters (and TidbMonitors, TidbDashboards, TidbNGMonitorings, TidbInitializers) to render: a file, a directory of *.yaml files, or '-' for standard input.")
	image := fs.String("tidb-discovery-image", OperatorImage(), "Image of the discovery Deployment.")
	jobImage := fs.String("tidb-backup-manager-image", OperatorImage(), "Image of the TidbInitializer Job.")
	namespace := fs.String("namespace", "default", "Namespace of clusters whose YAML names none.")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" {
		_, _ = fmt.Fprintln(stderr, "render: -f is required")
		return 2
	}
	in, err := readInput(*file)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "render:", err)
		return 1
	}
	in.setNamespace(*namespace)
	// The other kinds are built from the clusters as the API holds them,
	// before renderCluster defaults them in place.
	others, err := in.renderOthers(*jobImage)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "render:", err)
		return 1
	}
	for _, tc := range in.clusters {
		if err := renderCluster(stdout, tc, *image); err != nil {
			_, _ = fmt.Fprintf(stderr, "render %s: %v\n", tc.Name, err)
			return 1
		}
	}
	for _, o := range others {
		if err := writeYAML(stdout, o); err != nil {
			_, _ = fmt.Fprintln(stderr, "render:", err)
			return 1
		}
	}
	return 0
}

// readInput reads path (see readFileOrDir) and decodes
// each document of a kind render builds; other kinds are skipped. It errors
// on an unreadable file, a document that does not decode strictly, or a
// file with nothing to render.
func readInput(path string) (*input, error) {
	raw, err := readFileOrDir(path)
	if err != nil {
		return nil, err
	}
	in := &input{}
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		if err := in.add(meta.Kind, doc); err != nil {
			return nil, fmt.Errorf("decode %s: %w", meta.Kind, err)
		}
	}
	if in.empty() {
		return nil, errors.New("no TidbCluster, TidbMonitor, TidbDashboard, TidbNGMonitoring or TidbInitializer in the input")
	}
	return in, nil
}

// readFileOrDir returns standard input for "-", the file at path, or, for
// a directory, its *.yaml and *.yml files in name order as one stream of
// documents (as `kubectl apply -f <dir>` takes them).
func readFileOrDir(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	info, err := os.Stat(path)
	if err != nil || !info.IsDir() {
		return os.ReadFile(path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var all []byte
	for _, e := range entries {
		if e.IsDir() || (!strings.HasSuffix(e.Name(), ".yaml") && !strings.HasSuffix(e.Name(), ".yml")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		all = append(append(all, "\n---\n"...), b...)
	}
	return all, nil
}

// checkSpecFields rejects unknown fields in the spec of a TidbCluster doc. A TidbCluster
// reads its own JSON (it tolerates an unreadable spec, see
// v1alpha1.DecodeError), so a strict decoder's rule does not reach inside
// it; the spec type has no such reader and is decoded strictly here.
func checkSpecFields(doc []byte) error {
	var obj struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := yaml.Unmarshal(doc, &obj); err != nil || len(obj.Spec) == 0 {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(obj.Spec))
	dec.DisallowUnknownFields()
	// Type errors are reported by validation, with the field named.
	if err := dec.Decode(&v1alpha1.TidbClusterSpec{}); err != nil && strings.Contains(err.Error(), "unknown field") {
		return fmt.Errorf("spec: %w", err)
	}
	return nil
}

func renderCluster(w io.Writer, tc *v1alpha1.TidbCluster, image string) error {
	defaulting.SetTidbClusterDefaults(tc)
	if errs := validation.ValidateTidbCluster(tc); len(errs) > 0 {
		return fmt.Errorf("invalid spec: %w", errs.ToAggregate())
	}
	var objs []metav1.Object
	for _, m := range members.New(&component.Env{DiscoveryImage: image}) {
		r, ok := m.(interface {
			Desired(*v1alpha1.TidbCluster) ([]metav1.Object, error)
		})
		if !ok {
			continue
		}
		more, err := r.Desired(tc)
		if err != nil {
			return err
		}
		objs = append(objs, more...)
	}
	for _, o := range objs {
		if err := writeYAML(w, o); err != nil {
			return err
		}
	}
	return nil
}

func writeYAML(w io.Writer, o metav1.Object) error {
	obj := o.(runtime.Object)
	gvks, _, err := clientgoscheme.Scheme.ObjectKinds(obj)
	if err == nil && len(gvks) > 0 {
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", strings.TrimPrefix(string(b), "---\n"))
	return err
}
