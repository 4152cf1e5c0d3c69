package validation

import (
	"regexp"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// timezonePattern accepts IANA zone names (Asia/Shanghai, UTC, Etc/GMT+8)
// and POSIX TZ strings without spaces; the value becomes the pods' TZ.
var timezonePattern = regexp.MustCompile(`^[A-Za-z0-9_+\-/:.,<>]{1,64}$`)

// validateClusterFields checks cluster-level strings that end up in every
// pod: clusterDomain is a DNS subdomain (it is appended to every member's
// address) and timezone looks like a TZ value.
func validateClusterFields(s *v1alpha1.TidbClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.ClusterDomain != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(s.ClusterDomain) {
			errs = append(errs, field.Invalid(path.Child("clusterDomain"), s.ClusterDomain, msg))
		}
	}
	if s.Timezone != "" && !timezonePattern.MatchString(s.Timezone) {
		errs = append(errs, field.Invalid(path.Child("timezone"), s.Timezone,
			"must be a time zone name such as UTC or Asia/Shanghai (letters, digits and _+-/:.,<>, at most 64)"))
	}
	return errs
}
