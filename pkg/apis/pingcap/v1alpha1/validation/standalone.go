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
