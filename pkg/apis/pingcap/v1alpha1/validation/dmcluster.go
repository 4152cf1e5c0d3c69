package validation

import (
	"encoding/json"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// dmV1Version matches the versions v1.6 refuses for a DMCluster (major < 2).
var dmV1Version = regexp.MustCompile(`^v?[01]\.[0-9]+\.[0-9]+`)

// dmNameMax is the longest DMCluster name whose longest child name,
// <dc>-dm-discovery's pods' instance label and <dc>-dm-master-peer, stays a
// valid 63-character label value and Service name.
const dmNameMax = 63 - len("-dm-master-peer")

// DMDeleteSlotsAnnotations are the DMCluster annotations that must hold a
// JSON array of ordinals.
var DMDeleteSlotsAnnotations = []string{
	"dm-master.tidb.pingcap.com/delete-slots", "dm-worker.tidb.pingcap.com/delete-slots",
}

// ValidateDMCluster returns every problem of dc's spec; an empty list means
// valid: the spec was readable, the name leaves room for its children's
// names, the version is v2 or later, replicas are not negative, storage
// sizes, resources, images and env are usable, the configs are readable, and
// the delete-slots annotations are JSON arrays of integers. A nil dc is valid.
func ValidateDMCluster(dc *v1alpha1.DMCluster) field.ErrorList {
	if dc == nil {
		return nil
	}
	if dc.DecodeError != nil {
		return validateDecoded(dc.DecodeError)
	}
	var errs field.ErrorList
	if len(dc.Name) > dmNameMax {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), dc.Name, dmNameMax))
	}
	s, path := &dc.Spec, field.NewPath("spec")
	if dmV1Version.MatchString(s.Version) {
		errs = append(errs, field.Invalid(path.Child("version"), s.Version, "dm cluster version can't set to v1.x.y"))
	}
	errs = append(errs, validateVersion(s.Version, path.Child("version"))...)
	m := &s.Master
	errs = append(errs, validateDMMember(&m.ComponentSpec, m.Replicas, m.BaseImage, m.StorageSize, m.Requests, m.Limits, path.Child("master"))...)
	if m.Replicas > 0 && m.StorageSize == "" {
		errs = append(errs, field.Required(path.Child("master", "storageSize"), "storageSize must not be empty"))
	}
	if w := s.Worker; w != nil {
		errs = append(errs, validateDMMember(&w.ComponentSpec, w.Replicas, w.BaseImage, w.StorageSize, w.Requests, w.Limits, path.Child("worker"))...)
	}
	errs = append(errs, ValidateStandaloneImage(&s.Discovery.ComponentSpec, "", path.Child("discovery"))...)
	errs = append(errs, validateConfigs(s, path)...)
	for _, key := range DMDeleteSlotsAnnotations {
		if v, ok := dc.Annotations[key]; ok {
			var slots []int32
			if err := json.Unmarshal([]byte(v), &slots); err != nil {
				errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(key), v, "must be a JSON array of ordinals, such as [1,3]"))
			}
		}
	}
	return errs
}

// validateDMMember checks what dm-master and dm-worker share.
func validateDMMember(cs *v1alpha1.ComponentSpec, replicas int32, baseImage, storageSize string,
	requests, limits corev1.ResourceList, path *field.Path) field.ErrorList {
	c := component{name: path.String(), title: path.String(), path: path, spec: cs, requests: requests, limits: limits,
		hasReplicas: true, replicas: replicas, baseImage: baseImage}
	errs := validateComponent(c)
	if storageSize != "" {
		errs = append(errs, validateQuantity(storageSize, path.Child("storageSize"))...)
	}
	return errs
}
