// Package corpus holds malformed pingcap.com objects as data, and the seed
// inputs and structural mutation shared by the operator's fuzz targets.
//
// Each Case is a small valid base object (a 1/1/1 TidbCluster, an S3 Backup,
// Restore or BackupSchedule, or a TidbMonitor, TidbDashboard,
// TidbNGMonitoring or TidbInitializer of the cluster "healthy") with a
// patch that breaks one field. The
// integration test in tests/badinput creates every case through the dynamic
// client and checks the operator's answer; the fuzz targets in pkg/... start
// from the same objects and from examples/. The package has no build tag and
// imports nothing of this module, so any test may use it.
package corpus

import (
	"bytes"
	_ "embed" // corpus.yaml
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Outcome is what the operator and the API server must make of a case.
type Outcome string

// The outcomes a case may declare. A case that declares none must end as
// Rejected or Invalid, whichever happens; any other result fails.
const (
	// Either is Rejected or Invalid (the default).
	Either Outcome = ""
	// Rejected: the API server refuses the create, naming Field.
	Rejected Outcome = "rejected"
	// Invalid: accepted; the operator reports Field invalid (TidbCluster:
	// Degraded=True InvalidSpec; Backup/Restore: Invalid=True; all kinds: a
	// Warning FailedValidation event) and writes nothing for it.
	Invalid Outcome = "invalid"
	// Reported: accepted and valid; for a TidbCluster the operator writes
	// its objects and a condition message matches Report (a missing
	// Secret …); for a TidbMonitor, TidbDashboard, TidbNGMonitoring or
	// TidbInitializer a Warning event and a condition match Report (a
	// missing TidbCluster, Secret or ConfigMap) and nothing is written.
	Reported Outcome = "reported"
	// Valid: accepted and valid; the operator writes the cluster's objects
	// and never reports the spec invalid (names at the length limit …).
	Valid Outcome = "valid"
)

// Case is one malformed (or boundary) object.
type Case struct {
	// Name is the case's name and the object's metadata.name unless Patch
	// sets another.
	Name string `json:"name"`
	// Kind is TidbCluster (when empty), Backup, Restore, BackupSchedule,
	// TidbMonitor, TidbDashboard, TidbNGMonitoring, TidbInitializer or
	// DMCluster.
	Kind string `json:"kind,omitempty"`
	// Field is the JSON path of the broken field that the rejection or
	// report must name, e.g. spec.tikv.replicas. A CEL rule on an enclosing
	// object names it as "spec.pd: … requests.storage …", which also counts.
	Field string `json:"field"`
	// Also, when set, must appear in the same message too (for a Field as
	// broad as "spec").
	Also string `json:"also,omitempty"`
	// Built is the field of an object the operator builds from Field, such
	// as spec.template.spec.tolerations[*].operator of a StatefulSet, which
	// the operator's precheck names instead of Field ("[*]" matches any
	// index). A message naming either counts.
	Built string `json:"built,omitempty"`
	// Expect is the declared outcome (Either when empty).
	Expect Outcome `json:"expect,omitempty"`
	// Report is a regular expression a condition message must match for
	// Expect Reported.
	Report string `json:"report,omitempty"`
	// Why says what the case breaks, for the report of a failure.
	Why string `json:"why"`
	// Patch is merged into the base object: maps merge key by key, any
	// other value (null included) replaces.
	Patch map[string]any `json:"patch,omitempty"`
	// Unset lists dotted paths removed from the base before Patch.
	Unset []string `json:"unset,omitempty"`
	// Update, when set, makes the case a change of a running object: the
	// object (base, Unset, Patch: valid) is created, and once the operator
	// has written its objects Update is merge-patched into it. The outcome
	// is that of the update, and nothing written for the object may change
	// after it.
	Update map[string]any `json:"update,omitempty"`
}

//go:embed corpus.yaml
var corpusYAML []byte

//go:embed bases.yaml
var basesYAML []byte

// Cases returns the corpus, in file order. It fails when the file cannot be
// read, a name repeats or is a prefix (followed by "-") of another one,
// because the integration test attributes written objects by name prefix.
func Cases() ([]Case, error) {
	var cases []Case
	if err := decodeYAML(corpusYAML, &cases); err != nil {
		return nil, fmt.Errorf("corpus.yaml: %w", err)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if c.Name == "" || c.Field == "" || c.Why == "" {
			return nil, fmt.Errorf("case %q: name, field and why are required", c.Name)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("case %q is listed twice", c.Name)
		}
		seen[c.Name] = true
	}
	for _, a := range cases {
		for _, b := range cases {
			if a.Name != b.Name && strings.HasPrefix(ObjectName(b), ObjectName(a)+"-") {
				return nil, fmt.Errorf("object name of case %q begins with that of case %q", b.Name, a.Name)
			}
		}
	}
	return cases, nil
}

// KindOf returns c's kind, TidbCluster when unset.
func KindOf(c Case) string {
	if c.Kind == "" {
		return "TidbCluster"
	}
	return c.Kind
}

// ObjectName is the metadata.name c's object gets.
func ObjectName(c Case) string {
	if md, ok := c.Patch["metadata"].(map[string]any); ok {
		if n, ok := md["name"].(string); ok {
			return n
		}
	}
	return c.Name
}

// Object returns c's object (base of its kind, Unset removed, Patch merged)
// as the unstructured content a dynamic client sends. Numbers are
// json.Number so that huge integers reach the API server as written.
func Object(c Case) (map[string]any, error) {
	var bases map[string]map[string]any
	if err := decodeYAML(basesYAML, &bases); err != nil {
		return nil, fmt.Errorf("bases.yaml: %w", err)
	}
	base, ok := bases[KindOf(c)]
	if !ok {
		return nil, fmt.Errorf("case %s: no base object of kind %q", c.Name, c.Kind)
	}
	obj := base
	obj["metadata"] = map[string]any{"name": c.Name}
	for _, p := range c.Unset {
		unset(obj, strings.Split(p, "."))
	}
	return merge(obj, c.Patch).(map[string]any), nil
}

// JSON returns Object(c) encoded, for fuzz seeds.
func JSON(c Case) ([]byte, error) {
	obj, err := Object(c)
	if err != nil {
		return nil, err
	}
	return json.Marshal(obj)
}

// Names reports whether msg names field: it contains the path itself, or
// (a CEL rule on an enclosing object) a path prefix of it together with the
// rest of the path, e.g. "spec.pd: … requests.storage is required" names
// spec.pd.requests.storage.
func Names(msg, field string) bool {
	if strings.Contains(msg, field) {
		return true
	}
	parts := strings.Split(field, ".")
	for i := len(parts) - 1; i > 0; i-- {
		prefix, rest := strings.Join(parts[:i], "."), strings.Join(parts[i:], ".")
		if containsPath(msg, prefix) && strings.Contains(msg, rest) {
			return true
		}
	}
	return false
}

// NamesBuilt reports whether msg names built, a field path in which "[*]"
// stands for any index.
func NamesBuilt(msg, built string) bool {
	if built == "" {
		return false
	}
	pattern := strings.ReplaceAll(regexp.QuoteMeta(built), `\[\*\]`, `\[[0-9]+\]`)
	return regexp.MustCompile(pattern).MatchString(msg)
}

// containsPath reports whether msg contains path as a whole field path
// (followed by ':' or '[' or whitespace, not a longer name).
func containsPath(msg, path string) bool {
	re := regexp.MustCompile(regexp.QuoteMeta(path) + `([:\[\s]|$)`)
	return re.MatchString(msg)
}

// decodeYAML reads YAML into out with numbers kept as json.Number.
func decodeYAML(data []byte, out any) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	return dec.Decode(out)
}

// merge returns patch merged into base: maps merge recursively, anything
// else in patch replaces.
func merge(base, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	bm, ok := base.(map[string]any)
	if !ok {
		bm = map[string]any{}
	}
	for k, v := range pm {
		bm[k] = merge(bm[k], v)
	}
	return bm
}

func unset(obj map[string]any, path []string) {
	for _, key := range path[:len(path)-1] {
		next, ok := obj[key].(map[string]any)
		if !ok {
			return
		}
		obj = next
	}
	delete(obj, path[len(path)-1])
}
