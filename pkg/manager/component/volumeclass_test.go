package component

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func template(name string, class *string) corev1.PersistentVolumeClaim {
	t := corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: class}}
	t.Name = name
	return t
}

// TestDriftedAttributesClasses names each claim template whose volume
// attributes class differs between desired and live by the spec path that
// sets it, and ignores templates only one side has.
func TestDriftedAttributesClasses(t *testing.T) {
	t.Parallel()
	fast, slow := "fast", "slow"
	cases := []struct {
		name, component string
		desired, live   []corev1.PersistentVolumeClaim
		want            []string
	}{
		{"same classes", "tikv",
			[]corev1.PersistentVolumeClaim{template("tikv", &fast), template("tikv-raft", nil)},
			[]corev1.PersistentVolumeClaim{template("tikv", &fast), template("tikv-raft", nil)}, nil},
		{"data volume set after creation", "tikv",
			[]corev1.PersistentVolumeClaim{template("tikv", &fast)},
			[]corev1.PersistentVolumeClaim{template("tikv", nil)},
			[]string{"spec.tikv.volumeAttributesClassName"}},
		{"storage volume changed, data volume unset", "pd",
			[]corev1.PersistentVolumeClaim{template("pd", nil), template("pd-log", &slow)},
			[]corev1.PersistentVolumeClaim{template("pd", &fast), template("pd-log", &fast)},
			[]string{"spec.pd.volumeAttributesClassName", "spec.pd.storageVolumes[log].volumeAttributesClassName"}},
		{"pump data volume", "pump",
			[]corev1.PersistentVolumeClaim{template("data", &fast)},
			[]corev1.PersistentVolumeClaim{template("data", &slow)},
			[]string{"spec.pump.volumeAttributesClassName"}},
		{"tiflash disk", "tiflash",
			[]corev1.PersistentVolumeClaim{template("data0", nil), template("data1", &fast)},
			[]corev1.PersistentVolumeClaim{template("data0", nil), template("data1", nil)},
			[]string{"spec.tiflash.storageClaims[1].volumeAttributesClassName"}},
		{"a template only one side has", "tidb",
			[]corev1.PersistentVolumeClaim{template("tidb-log", &fast)},
			[]corev1.PersistentVolumeClaim{template("tidb-tmp", nil)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := DriftedAttributesClasses(c.component, c.desired, c.live)
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
