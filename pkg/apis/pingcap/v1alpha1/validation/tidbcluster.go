// Package validation checks pingcap.com/v1alpha1 objects before the operator
// acts on them (spec §3.1). Every function is pure: it reads the object,
// returns a field.ErrorList with exact JSON field paths, and never changes it.
// Run it on a copy already passed through package defaulting, because the
// checks assume defaults are filled in (an empty value is then a user's
// mistake, not "use the default"); undefaulted input never makes it panic.
//
// An invalid object is a permanent failure of the user's spec: the caller
// records a Warning event and a condition and does not retry until the object
// changes.
package validation

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
)

// deleteSlotsAnnotation returns the TidbCluster annotation listing the
// ordinals of component's pods to delete first when scaling in.
func deleteSlotsAnnotation(component string) string {
	return component + ".tidb.pingcap.com/delete-slots"
}

var (
	startScriptVersions = []string{"", "v1", "v2"}
	startScriptV2Flags  = []string{"WaitForDnsNameIpMatch", "PreferPDAddressesOverDiscovery", "BashShebang", "NoWaitDNS"}
)

// ValidateTidbCluster returns every problem of tc's metadata annotations and
// spec; an empty list means valid. A spec that could not be read
// (tc.DecodeError) is the only problem reported for it. It checks every
// config that is neither a map nor valid TOML, the delete-slots annotations,
// the cluster-level fields (PD source, cluster reference, pdAddresses, start
// script version and flags, PD scaled to zero, helper image and version) and
// each configured component (validateComponent for the shared fields,
// validateComponentSpecifics for TiKV, TiFlash and TiDB). A nil tc is valid.
func ValidateTidbCluster(tc *v1alpha1.TidbCluster) field.ErrorList {
	if tc == nil {
		return nil
	}
	if tc.DecodeError != nil {
		return validateDecoded(tc.DecodeError)
	}
	specPath := field.NewPath("spec")
	errs := validateConfigs(&tc.Spec, specPath)
	errs = append(errs, validateDeleteSlots(tc.Annotations, field.NewPath("metadata", "annotations"))...)
	errs = append(errs, ValidateClusterName(tc.Name, &tc.Spec)...)
	errs = append(errs, validatePDSource(&tc.Spec, specPath)...)
	errs = append(errs, validateClusterRef(tc.Spec.Cluster, specPath.Child("cluster"))...)
	errs = append(errs, validatePDAddresses(tc.Spec.PDAddresses, specPath.Child("pdAddresses"))...)
	errs = append(errs, validateStartScript(&tc.Spec, specPath)...)
	errs = append(errs, validatePDNotStranding(&tc.Spec, specPath)...)
	errs = append(errs, validateClusterFields(&tc.Spec, specPath)...)
	if tc.Spec.Helper != nil && tc.Spec.Helper.Image != nil {
		errs = append(errs, validateImageString(*tc.Spec.Helper.Image, specPath.Child("helper", "image"))...)
	}
	errs = append(errs, validateVersion(tc.Spec.Version, specPath.Child("version"))...)
	for _, c := range componentsOf(&tc.Spec, specPath) {
		errs = append(errs, validateComponent(c)...)
	}
	errs = append(errs, validateComponentSpecifics(&tc.Spec, specPath)...)
	return errs
}

// validateDeleteSlots checks that every delete-slots annotation (of the
// components whose descriptor has DeleteSlots) is a JSON
// array of non-negative integers, such as [0, 3].
func validateDeleteSlots(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, d := range components.All {
		if !d.DeleteSlots {
			continue
		}
		key := deleteSlotsAnnotation(d.Name)
		value, ok := annotations[key]
		if !ok {
			continue
		}
		var slots []int64
		if !strings.HasPrefix(strings.TrimSpace(value), "[") || json.Unmarshal([]byte(value), &slots) != nil {
			errs = append(errs, field.Invalid(path.Key(key), value, "must be a JSON array of pod ordinals, such as [0,2]"))
			continue
		}
		for _, s := range slots {
			if s < 0 {
				errs = append(errs, field.Invalid(path.Key(key), value, "pod ordinals must not be negative"))
				break
			}
		}
	}
	return errs
}

// validatePDSource requires a PD for every component that talks to PD,
// because without one the pods would wait for PD forever.
func validatePDSource(s *v1alpha1.TidbClusterSpec, path *field.Path) field.ErrorList {
	if s.PD != nil || s.Cluster != nil || len(s.PDAddresses) > 0 {
		return nil
	}
	var clients []string
	for _, c := range componentsOf(s, path) {
		if c.name != "discovery" && c.name != "pdms" {
			clients = append(clients, c.title)
		}
	}
	if len(clients) == 0 {
		return nil
	}
	return field.ErrorList{field.Required(path.Child("pd"),
		"a PD is required by "+strings.Join(clients, ", ")+": set spec.pd, spec.cluster or spec.pdAddresses")}
}

func validateClusterRef(ref *v1alpha1.TidbClusterRef, path *field.Path) field.ErrorList {
	if ref != nil && ref.Name == "" {
		return field.ErrorList{field.Required(path.Child("name"), "the TidbCluster whose PD to join must be named")}
	}
	return nil
}

// validatePDAddresses requires http or https URLs with a host, such as
// http://pd.example:2379, because they are passed to the components verbatim.
func validatePDAddresses(addrs []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, addr := range addrs {
		u, err := url.Parse(addr)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, field.Invalid(path.Index(i), addr, "must be an http:// or https:// URL with a host, such as http://pd.example:2379"))
		}
	}
	return errs
}

func validateStartScript(s *v1alpha1.TidbClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !slices.Contains(startScriptVersions, string(s.StartScriptVersion)) {
		errs = append(errs, field.NotSupported(path.Child("startScriptVersion"), s.StartScriptVersion, startScriptVersions))
	}
	for i, flag := range s.StartScriptV2FeatureFlags {
		if !slices.Contains(startScriptV2Flags, string(flag)) {
			errs = append(errs, field.NotSupported(path.Child("startScriptV2FeatureFlags").Index(i), flag, startScriptV2Flags))
		}
	}
	return errs
}

// validatePDNotStranding rejects a cluster whose own PD is scaled to zero
// while other components still run and have no other PD to talk to.
func validatePDNotStranding(s *v1alpha1.TidbClusterSpec, path *field.Path) field.ErrorList {
	if s.PD == nil || s.PD.Replicas != 0 || s.Cluster != nil || len(s.PDAddresses) > 0 {
		return nil
	}
	for _, c := range componentsOf(s, path) {
		if c.hasReplicas && !c.pd && c.replicas > 0 {
			return field.ErrorList{field.Invalid(path.Child("pd", "replicas"), s.PD.Replicas,
				"scaling PD to 0 would strand the other components ("+c.title+" has replicas)")}
		}
	}
	return nil
}
