package validation

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// maxImageLength bounds an image reference; registries refuse longer names.
const maxImageLength = 512

var (
	// imageReference is the container image grammar: an optional registry
	// host (with port), lower-case path components, an optional tag and an
	// optional digest.
	imageReference = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?/)?` +
		`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
		`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,})?$`)
	// imageTag is a tag alone.
	imageTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
)

// Sanity bounds of one container's resources: no node has more, so a larger
// value is a typo (999Ei) that leaves the pod unschedulable for ever.
var (
	maxCPU    = resource.MustParse("100000")
	maxMemory = resource.MustParse("1Pi")
)

// validateResourceSizes rejects absurd CPU, memory and ephemeral-storage
// quantities (a data volume size is checked by validateStorageRequest).
func validateResourceSizes(list corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range list {
		limit := maxMemory
		switch {
		case name == corev1.ResourceCPU:
			limit = maxCPU
		case name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage,
			strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		default:
			continue
		}
		if q.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Key(string(name)), q.String(), "must be at most "+limit.String()))
		}
	}
	return errs
}

// validateConfigTables reports a section of tables (the component's
// descriptor's ConfigTables: TOML tables in the component's own
// configuration, which the operator may write defaults or TLS paths into)
// written as a scalar (`storage = "big"` instead of `[storage]`): the
// component would refuse to start, and the defaults could not be set.
func validateConfigTables(tables []string, cfg *v1alpha1.Config, path *field.Path) field.ErrorList {
	if cfg == nil || cfg.Items == nil {
		return nil
	}
	var errs field.ErrorList
	for _, key := range tables {
		v, ok := cfg.Items[key]
		if !ok {
			continue
		}
		if _, table := v.(map[string]any); !table {
			errs = append(errs, field.Invalid(path.Child(key), v, "must be a table of settings (["+key+"]), not a single value"))
		}
	}
	return errs
}
