package component

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
)

// CheckObjects builds every object the component would write for tc (its
// Services, ConfigMap and StatefulSet, with the builders the sync uses) and
// checks them with the API server's rules (package precheck), so a spec the
// API server would refuse one of them for is reported before the first
// write of the sync instead of half applied. tc must be defaulted and
// valid; a builder error is reported as an error of spec.<component>.
func (m *Manager[O]) CheckObjects(tc O) field.ErrorList {
	objs, err := desiredObjects(m.owner, tc, m.comp)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec", m.comp.Name()), "<spec>", err.Error())}
	}
	return precheck.Objects(objs)
}
