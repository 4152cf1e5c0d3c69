package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
// TidbCluster in the file, offline, with the operator's own builders.
func renderMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "TidbCluster YAML file to render ('-' for standard input).")
	image := fs.String("tidb-discovery-image", OperatorImage(), "Image of the discovery Deployment.")
	namespace := fs.String("namespace", "default", "Namespace of clusters whose YAML names none.")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" {
		_, _ = fmt.Fprintln(stderr, "render: -f is required")
		return 2
	}
	clusters, err := readClusters(*file)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "render:", err)
		return 1
	}
	for _, tc := range clusters {
		if tc.Namespace == "" {
			tc.Namespace = *namespace
		}
		if err := renderCluster(stdout, tc, *image); err != nil {
			_, _ = fmt.Fprintf(stderr, "render %s: %v\n", tc.Name, err)
			return 1
		}
	}
	return 0
}

func readClusters(path string) ([]*v1alpha1.TidbCluster, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var out []*v1alpha1.TidbCluster
	for _, doc := range bytes.Split(raw, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		if meta.Kind != "TidbCluster" {
			continue
		}
		tc := &v1alpha1.TidbCluster{}
		if err := yaml.UnmarshalStrict(doc, tc); err != nil {
			return nil, fmt.Errorf("decode TidbCluster: %w", err)
		}
		if err := checkSpecFields(doc); err != nil {
			return nil, fmt.Errorf("decode TidbCluster: %w", err)
		}
		out = append(out, tc)
	}
	if len(out) == 0 {
		return nil, errors.New("no TidbCluster in the input")
	}
	return out, nil
}

// checkSpecFields rejects unknown fields in the spec of doc. A TidbCluster
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
