package components_test

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// fullSpec has every component, each with a distinct replica count.
func fullSpec() *v1alpha1.TidbClusterSpec {
	return &v1alpha1.TidbClusterSpec{
		PD: &v1alpha1.PDSpec{Replicas: 1}, TiKV: &v1alpha1.TiKVSpec{Replicas: 2}, TiDB: &v1alpha1.TiDBSpec{Replicas: 3},
		TiFlash: &v1alpha1.TiFlashSpec{Replicas: 4}, TiCDC: &v1alpha1.TiCDCSpec{Replicas: 5},
		Pump: &v1alpha1.PumpSpec{Replicas: 6}, TiProxy: &v1alpha1.TiProxySpec{Replicas: 7},
		PDMS: []*v1alpha1.PDMSSpec{nil, {Name: "scheduling", Replicas: 9, BaseImage: new(string)},
			{Name: "tso", Replicas: 8, BaseImage: new(string)}},
	}
}

func TestDescriptorsReadTheirOwnSpec(t *testing.T) {
	t.Parallel()
	s := fullSpec()
	seen := map[string]bool{}
	for i, d := range components.All {
		if seen[d.Name] {
			t.Fatalf("%s declared twice", d.Name)
		}
		seen[d.Name] = true
		if components.Lookup(d.Name) != d {
			t.Errorf("Lookup(%q) is not the declared descriptor", d.Name)
		}
		f, ok := d.Spec(s)
		if !ok || f.Replicas != int32(i+1) {
			t.Errorf("%s: Spec read replicas %d (present %v), want %d: it reads another component's field", d.Name, f.Replicas, ok, i+1)
		}
		*f.BaseImage = "mine/" + d.Name
		if g, _ := d.Spec(s); *g.BaseImage != "mine/"+d.Name {
			t.Errorf("%s: BaseImage does not point into the spec", d.Name)
		}
		if _, ok := d.Spec(&v1alpha1.TidbClusterSpec{}); ok {
			t.Errorf("%s: present in an empty spec", d.Name)
		}
		if d.Status(&v1alpha1.TidbClusterStatus{}) == nil || d.Title == "" || d.BaseImage == "" || d.Name == "" {
			t.Errorf("%s: incomplete descriptor", d.Name)
		}
	}
	if st := components.PDMSStatus(&v1alpha1.TidbClusterStatus{}, "tso"); st.Name != "tso" {
		t.Errorf("status.pdms entry named %q, want tso", st.Name)
	}
	if got := len(components.Present(s)); got != len(components.All) {
		t.Errorf("Present found %d of %d components", got, len(components.All))
	}
}

func TestDescriptorNamesAreTheObjectNamesAndLabels(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d           *components.Descriptor
		name, label string
	}{
		{&components.PD, names.PD, label.PDLabelVal}, {&components.TiKV, names.TiKV, label.TiKVLabelVal},
		{&components.TiDB, names.TiDB, label.TiDBLabelVal}, {&components.TiFlash, names.TiFlash, label.TiFlashLabelVal},
		{&components.TiCDC, names.TiCDC, label.TiCDCLabelVal}, {&components.Pump, names.Pump, label.PumpLabelVal},
		{&components.TiProxy, names.TiProxy, label.TiProxyLabelVal},
		{&components.TSO, names.TSO, label.TSOLabelVal}, {&components.Scheduling, names.Scheduling, label.SchedulingLabelVal},
	} {
		if c.d.Name != c.name || c.d.Name != c.label {
			t.Errorf("descriptor %q, names %q, label %q", c.d.Name, c.name, c.label)
		}
	}
}

func TestInSyncOrder(t *testing.T) {
	t.Parallel()
	var got []string
	for _, d := range components.InSyncOrder() {
		got = append(got, d.Name)
	}
	want := []string{"tso", "scheduling", "pd", "tiproxy", "tiflash", "tikv", "pump", "tidb", "ticdc"}
	if len(got) != len(want) {
		t.Fatalf("InSyncOrder = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("InSyncOrder = %v, want %v", got, want)
		}
	}
	if components.All[0] != &components.PD || components.All[1] != &components.TiKV {
		t.Error("InSyncOrder reordered All")
	}
}

func TestSetsAttributesClass(t *testing.T) {
	t.Parallel()
	class := "fast"
	for _, c := range []struct {
		name string
		f    components.Fields
		want bool
	}{
		{"none", components.Fields{StorageVolumes: []v1alpha1.StorageVolume{{Name: "a"}}}, false},
		{"data volume", components.Fields{VolumeAttributesClassName: &class}, true},
		{"storage volume", components.Fields{StorageVolumes: []v1alpha1.StorageVolume{{Name: "a", VolumeAttributesClassName: &class}}}, true},
		{"storage claim", components.Fields{StorageClaims: []v1alpha1.StorageClaim{{VolumeAttributesClassName: &class}}}, true},
	} {
		if got := c.f.SetsAttributesClass(); got != c.want {
			t.Errorf("%s: SetsAttributesClass = %v, want %v", c.name, got, c.want)
		}
	}
}
