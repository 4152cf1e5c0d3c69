package validation

import (
	"encoding/json"
	"fmt"
	"slices"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// ticdcOperatorVolumes are the pod volumes the operator gives TiCDC (the downward-API annotations, the
// config file, the cluster and client certificates): a sink TLS Secret, mounted as a volume of its own
// name, must not take one of these names.
var ticdcOperatorVolumes = []string{"annotations", "config", "ticdc-tls", "cluster-client-tls"}

// ticdcStringItems are the items of spec.ticdc.config the operator passes as flags (--log-level,
// --log-file) or as TZ: each must be a string.
var ticdcStringItems = []string{"log-level", "log-file", "tz"}

// validateTiCDC checks what the TiCDC builders read of spec.ticdc: a graceful shutdown timeout that is
// not negative; sink TLS Secrets (tlsClientSecretNames) whose names can also name a pod volume (a
// DNS-1123 label), each listed once and none taking a volume name of the operator's or of the user's
// storage or additional volumes; and the config items the start flags carry with the types the flags
// take (gc-ttl a whole number of seconds, the others strings).
func validateTiCDC(cdc *v1alpha1.TiCDCSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := cdc.GracefulShutdownTimeout; d != nil && d.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("gracefulShutdownTimeout"), d.Duration.String(), "must not be negative"))
	}
	taken := slices.Clone(ticdcOperatorVolumes)
	for _, v := range cdc.StorageVolumes {
		taken = append(taken, "ticdc-"+v.Name)
	}
	for _, v := range cdc.AdditionalVolumes {
		taken = append(taken, v.Name)
	}
	seen := map[string]bool{}
	for i, name := range cdc.TLSClientSecretNames {
		p := path.Child("tlsClientSecretNames").Index(i)
		for _, msg := range utilvalidation.IsDNS1123Label(name) {
			errs = append(errs, field.Invalid(p, name, msg+" (the Secret is mounted as a pod volume of its name)"))
		}
		switch {
		case seen[name]:
			errs = append(errs, field.Duplicate(p, name))
		case slices.Contains(taken, name):
			errs = append(errs, field.Invalid(p, name, "is the name of another volume of the TiCDC pods"))
		}
		seen[name] = true
	}
	if cdc.Config != nil && cdc.Config.Items != nil {
		errs = append(errs, validateTiCDCFlagItems(cdc.Config.Items, path.Child("config"))...)
	}
	return errs
}

// validateTiCDCFlagItems checks the types of the config items the start flags carry.
func validateTiCDCFlagItems(items map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, ok := items["gc-ttl"]; ok && !isWholeSeconds(v) {
		errs = append(errs, field.Invalid(path.Child("gc-ttl"), fmt.Sprint(v), "must be a whole number of seconds, not negative"))
	}
	for _, key := range ticdcStringItems {
		if v, ok := items[key]; ok {
			if _, isString := v.(string); !isString {
				errs = append(errs, field.Invalid(path.Child(key), fmt.Sprint(v), "must be a string"))
			}
		}
	}
	return errs
}

// isWholeSeconds reports whether v, as read from YAML or TOML, is an integer ≥ 0.
func isWholeSeconds(v any) bool {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return err == nil && i >= 0
	case int64:
		return n >= 0
	}
	return false
}
