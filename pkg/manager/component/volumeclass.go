package component

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// UnappliedVolumeAttributesClasses names, by spec path, the
// volumeAttributesClassName values of tc that the component's live
// StatefulSet does not carry. A StatefulSet's volume claim templates are
// immutable, so a class set or changed after the StatefulSet was created
// reaches no PVC: neither the existing ones nor those of a scale-out. Nil
// when the component is absent, its StatefulSet does not exist yet, or
// neither side sets a class, and with the VolumeModifying gate, which
// moves PVCs and StatefulSet to the new class (volumeattrs.go).
func (m *Manager) UnappliedVolumeAttributesClasses(tc *v1alpha1.TidbCluster) []string {
	if m.sts == nil || !m.comp.Enabled(tc) || m.volumeModifying {
		return nil
	}
	live, err := m.sts.StatefulSets(tc.Namespace).Get(m.stsName(tc))
	if err != nil {
		return nil // not created yet (or unreadable): the templates will be built with the classes
	}
	if !hasAttributesClass(live.Spec.VolumeClaimTemplates) && !setsAttributesClass(tc, m.comp.Name()) {
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
	case component == names.TiFlash:
		if _, err := fmt.Sscanf(claim, "data%d", &i); err == nil {
			return fmt.Sprintf("%s.storageClaims[%d].volumeAttributesClassName", base, i)
		}
	case strings.HasPrefix(claim, component+"-"):
		return fmt.Sprintf("%s.storageVolumes[%s].volumeAttributesClassName", base, strings.TrimPrefix(claim, component+"-"))
	}
	return base + ".volumeAttributesClassName"
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
// anywhere in the named component's spec.
func setsAttributesClass(tc *v1alpha1.TidbCluster, component string) bool {
	s := &tc.Spec
	switch {
	case component == names.PD && s.PD != nil:
		return s.PD.VolumeAttributesClassName != nil || volumesSetClass(s.PD.StorageVolumes)
	case component == names.TiKV && s.TiKV != nil:
		return s.TiKV.VolumeAttributesClassName != nil || volumesSetClass(s.TiKV.StorageVolumes)
	case component == names.TiDB && s.TiDB != nil:
		return s.TiDB.VolumeAttributesClassName != nil || volumesSetClass(s.TiDB.StorageVolumes)
	case component == names.TiCDC && s.TiCDC != nil:
		return s.TiCDC.VolumeAttributesClassName != nil || volumesSetClass(s.TiCDC.StorageVolumes)
	case component == names.TiProxy && s.TiProxy != nil:
		return s.TiProxy.VolumeAttributesClassName != nil || volumesSetClass(s.TiProxy.StorageVolumes)
	case component == names.Pump && s.Pump != nil:
		return s.Pump.VolumeAttributesClassName != nil
	case component == names.TiFlash && s.TiFlash != nil:
		for _, c := range s.TiFlash.StorageClaims {
			if c.VolumeAttributesClassName != nil {
				return true
			}
		}
	}
	return false
}

func volumesSetClass(volumes []v1alpha1.StorageVolume) bool {
	for _, v := range volumes {
		if v.VolumeAttributesClassName != nil {
			return true
		}
	}
	return false
}
