package validation

import (
	"fmt"
	"slices"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TiProxyCertLayouts are the values of spec.tiproxy.certLayout: "" (the
// legacy layout) and "v1". The TiDB Operator takes any value but "v1" for
// the legacy layout; a typo would silently mount other Secrets, so another
// value is refused.
var TiProxyCertLayouts = []string{"", "v1"}

// tiproxyTables are the tables of TiProxy's config the operator writes its
// addresses and TLS paths into: a scalar there would make the paths
// impossible to set.
var tiproxyTables = []string{"proxy", "api", "security", "security.cluster-tls", "security.server-tls",
	"security.server-http-tls", "security.sql-tls", "log", "labels"}

// validateTiProxy checks spec.tiproxy: a known certificate layout, a
// client Secret name that can be a Secret's, the operator's config tables
// as tables, and no spec.acrossK8s, where the TiDB Operator refuses to run
// TiProxy (its PD addresses are not verified through discovery).
func validateTiProxy(s *v1alpha1.TidbClusterSpec, path *field.Path) field.ErrorList {
	p := s.TiProxy
	var errs field.ErrorList
	if s.AcrossK8s {
		errs = append(errs, field.Forbidden(path, "TiProxy is not supported with spec.acrossK8s"))
	}
	if !slices.Contains(TiProxyCertLayouts, p.CertLayout) {
		errs = append(errs, field.NotSupported(path.Child("certLayout"), p.CertLayout, TiProxyCertLayouts))
	}
	if name := p.TLSClientSecretName; name != nil {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(*name) {
			errs = append(errs, field.Invalid(path.Child("tlsClientSecretName"), *name, msg))
		}
	}
	if cfg := p.Config; cfg != nil && cfg.Items != nil {
		for _, table := range tiproxyTables {
			if v, ok := lookupDotted(cfg.Items, table); ok && !isTable(v) {
				errs = append(errs, field.Invalid(dotted(path.Child("config"), table), fmt.Sprint(v), "must be a table of settings"))
			}
		}
	}
	return errs
}
