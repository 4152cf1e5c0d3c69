package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// pumpTables are the tables of Pump's config: security, where the operator writes the TLS paths, and
// storage. A scalar there makes the TLS paths impossible to set, or Pump refuse its config.
var pumpTables = []string{"security", "storage"}

// validatePump checks what the Pump builders read of spec.pump.config: log-level, which the start
// script passes as -L, a string; and Pump's tables as tables. (The data volume size is checked with
// every component's.)
func validatePump(p *v1alpha1.PumpSpec, path *field.Path) field.ErrorList {
	if p.Config == nil || p.Config.Items == nil {
		return nil
	}
	var errs field.ErrorList
	cfg := path.Child("config")
	if v, ok := p.Config.Items["log-level"]; ok {
		if _, isString := v.(string); !isString {
			errs = append(errs, field.Invalid(cfg.Child("log-level"), fmt.Sprint(v), "must be a string"))
		}
	}
	for _, table := range pumpTables {
		if v, ok := p.Config.Items[table]; ok && !isTable(v) {
			errs = append(errs, field.Invalid(cfg.Child(table), fmt.Sprint(v), "must be a table of settings (["+table+"]), not a single value"))
		}
	}
	return errs
}
