package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// ValidateStandaloneImage checks the image fields of a component that is
// not part of a TidbCluster (a TidbDashboard's spec, a TidbNGMonitoring's
// spec.ngMonitoring) as the cluster's components are checked: image and
// baseImage image references without whitespace, version an image tag.
func ValidateStandaloneImage(cs *v1alpha1.ComponentSpec, baseImage string, path *field.Path) field.ErrorList {
	errs := validateImageString(cs.Image, path.Child("image"))
	errs = append(errs, validateImageString(baseImage, path.Child("baseImage"))...)
	if cs.Version != nil {
		errs = append(errs, validateVersion(*cs.Version, path.Child("version"))...)
	}
	return errs
}

// ValidateBaseImageVersion checks an image given as a base image and a
// version (a TidbMonitor's containers: prometheus, grafana, reloader …):
// baseImage an image reference without whitespace, version an image tag.
// It returns one error per bad field, nil when both are usable or empty.
func ValidateBaseImageVersion(baseImage, version string, path *field.Path) field.ErrorList {
	errs := validateImageString(baseImage, path.Child("baseImage"))
	return append(errs, validateVersion(version, path.Child("version"))...)
}
