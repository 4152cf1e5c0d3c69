package component

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
)

// UnappliedVolumeAttributesClasses names, by spec path, the
// volumeAttributesClassName values of tc that the component's live
// StatefulSet does not carry. A StatefulSet's volume claim templates are
// immutable, so a class set or changed after the StatefulSet was created
// reaches no PVC: neither the existing ones nor those of a scale-out. Nil
// when the component is absent, its StatefulSet does not exist yet, or
// neither side sets a class, and with the VolumeModifying gate, which
// moves PVCs and StatefulSet to the new class (volumeattrs.go).
func (m *Manager[O]) UnappliedVolumeAttributesClasses(tc O) []string {
	if m.sts == nil || !m.comp.Enabled(tc) || m.volumeModifying {
		return nil
	}
	live, err := m.sts.StatefulSets(tc.GetNamespace()).Get(m.stsName(tc))
	if err != nil {
		return nil // not created yet (or unreadable): the templates will be built with the classes
	}
	if !hasAttributesClass(live.Spec.VolumeClaimTemplates) && !m.owner.SetsAttributesClass(tc, m.comp.Name()) {
		return nil
	}
	desired, err := m.comp.StatefulSet(tc, "")
	if err != nil {
		return nil // the sync reports the build error
	}
	return DriftedAttributesClasses(m.comp.Name(), desired.Spec.VolumeClaimTemplates, live.Spec.VolumeClaimTemplates)
}

// DriftedAttributesClasses compares the volume attributes classes of the
// claim templates both desired and live have, and names the spec path of
// each that differs: spec.<component>.volumeAttributesClassName for the data
// volume, spec.<component>.storageVolumes[<name>].volumeAttributesClassName
// for a storage volume (template <component>-<name>) and
// spec.tiflash.storageClaims[<i>].volumeAttributesClassName for TiFlash's
// data<i>.
func DriftedAttributesClasses(component string, desired, live []corev1.PersistentVolumeClaim) []string {
	liveClass := make(map[string]string, len(live))
	for _, t := range live {
		liveClass[t.Name] = classOf(t)
	}
	var out []string
	for _, t := range desired {
		got, ok := liveClass[t.Name]
		if !ok || got == classOf(t) {
			continue
		}
		out = append(out, attributesClassPath(component, t.Name))
	}
	return out
}

// attributesClassPath is the spec path that sets the class of the claim
// template named claim.
func attributesClassPath(component, claim string) string {
	base := "spec." + component
	var i int
	switch {
	case claimsAreDataDisks(component):
		if _, err := fmt.Sscanf(claim, "data%d", &i); err == nil {
			return fmt.Sprintf("%s.storageClaims[%d].volumeAttributesClassName", base, i)
		}
	case strings.HasPrefix(claim, component+"-"):
		return fmt.Sprintf("%s.storageVolumes[%s].volumeAttributesClassName", base, strings.TrimPrefix(claim, component+"-"))
	}
	return base + ".volumeAttributesClassName"
}

// claimsAreDataDisks reports whether component's data volumes are its
// storageClaims (TiFlash's data<i>), by its descriptor.
func claimsAreDataDisks(component string) bool {
	d := components.Lookup(component)
	return d != nil && d.StorageClaims
}

func classOf(t corev1.PersistentVolumeClaim) string {
	if c := t.Spec.VolumeAttributesClassName; c != nil {
		return *c
	}
	return ""
}

func hasAttributesClass(templates []corev1.PersistentVolumeClaim) bool {
	for _, t := range templates {
		if classOf(t) != "" {
			return true
		}
	}
	return false
}

// setsAttributesClass reports whether tc sets a volume attributes class
// anywhere in the named component's spec (its descriptor's Fields).
func setsAttributesClass(tc *v1alpha1.TidbCluster, component string) bool {
	d := components.Lookup(component)
	if d == nil {
		return false
	}
	f, ok := d.Spec(&tc.Spec)
	return ok && f.SetsAttributesClass()
}
