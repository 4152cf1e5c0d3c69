package workload

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// InvalidStandalone returns why a standalone workload (TidbDashboard,
// TidbNGMonitoring) cannot be built, or "": an object name it would get
// that is no DNS label or a StatefulSet name over 52 characters
// (metadata.name too long), or a negative resource
// request or limit. Both would otherwise be found by the API server only
// when the objects are written, after the first of them (a Service) was.
func InvalidStandalone(statefulSet string, objectNames []string, res corev1.ResourceRequirements, path string) string {
	// The StatefulSet controller labels each pod with
	// controller-revision-hash <name>-<10 characters>, a label value.
	if len(statefulSet) > 52 {
		return fmt.Sprintf("metadata.name is too long: StatefulSet %s exceeds 52 characters", statefulSet)
	}
	for _, n := range append([]string{statefulSet}, objectNames...) {
		if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
			return fmt.Sprintf("metadata.name is too long or malformed for the object %s: %s", n, errs[0])
		}
	}
	for _, l := range []struct {
		list corev1.ResourceList
		name string
	}{{res.Requests, "requests"}, {res.Limits, "limits"}} {
		keys := make([]string, 0, len(l.list))
		for k := range l.list {
			keys = append(keys, string(k))
		}
		sort.Strings(keys)
		for _, k := range keys {
			if q := l.list[corev1.ResourceName(k)]; q.Sign() < 0 {
				return fmt.Sprintf("%s.%s.%s: %s must not be negative", path, l.name, k, q.String())
			}
		}
	}
	return ""
}
