package monitor

import (
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
)

// Unsupported lists, in a stable order, what tm sets that the operator
// accepts but does not act on (house rule: nothing accepted is silently
// ignored): the registry's TidbMonitor fields, then values no pod can use;
// the controller names them in the Unsupported condition and a Warning
// event. It is pure.
func Unsupported(tm *v1alpha1.TidbMonitor) []string {
	out := unsupported.Fields(unsupported.TidbMonitor, tm)
	out = append(out, refUnsupported(tm)...)
	for i, c := range tm.Spec.Clusters {
		if c.Namespace != "" && c.Namespace != tm.Namespace {
			out = append(out, fmt.Sprintf("spec.clusters[%d].namespace %s: the ServiceAccount %s gets no Role there "+
				"(grant it get/list/watch on pods, services and endpoints; a TLS cluster's client Secret must be copied into %s)",
				i, c.Namespace, Member(tm.Name), tm.Namespace))
		}
	}
	return out
}

func refUnsupported(tm *v1alpha1.TidbMonitor) []string {
	c := tm.Spec.Prometheus.Config
	if c == nil {
		return nil
	}
	var out []string
	if r := c.ConfigMapRef; r != nil && r.Namespace != nil && *r.Namespace != "" && *r.Namespace != tm.Namespace {
		out = append(out, "spec.prometheus.config.configMapRef.namespace (a pod mounts ConfigMaps of its own namespace only; "+tm.Namespace+" is used)")
	}
	if r := c.RuleConfigRef; r != nil && r.Namespace != nil && *r.Namespace != "" && *r.Namespace != tm.Namespace {
		out = append(out, "spec.prometheus.config.ruleConfigRef.namespace (a pod mounts ConfigMaps of its own namespace only; "+tm.Namespace+" is used)")
	}
	return out
}
