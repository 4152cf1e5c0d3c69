//go:build bench

package main

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestV1Minimum checks the v1 minimum of every bench shape against a count
// made by hand from the v1 object catalogue.
func TestV1Minimum(t *testing.T) {
	cases := []struct {
		shape string
		want  V1Minimum
	}{
		// 5 discovery + 4 PD + 3 TiKV + 4 TiDB; PD's and TiKV's pod, PVC, PV.
		{"basic", V1Minimum{Objects: 16, MetaPatches: 6, StatusWrites: 1}},
		// Same objects; 6 stateful pods × (pod, PVC, PV).
		{"ha", V1Minimum{Objects: 16, MetaPatches: 18, StatusWrites: 1}},
		// + TiFlash peer Service, ConfigMap, StatefulSet; its pod, PVC, PV.
		{"tiflash", V1Minimum{Objects: 19, MetaPatches: 9, StatusWrites: 1}},
		// + TiCDC peer Service, ConfigMap, StatefulSet; captures have no ID label.
		{"ticdc", V1Minimum{Objects: 19, MetaPatches: 6, StatusWrites: 1}},
		// 16 + 3 + 3 objects; (5 PD + 100 TiKV + 10 TiFlash) × 3 patches.
		{"big", V1Minimum{Objects: 22, MetaPatches: 345, StatusWrites: 1}},
	}
	for _, c := range cases {
		tc, _, err := loadShape(c.shape)
		if err != nil {
			t.Fatal(err)
		}
		if got := v1Minimum(tc); got != c.want {
			t.Errorf("%s: v1Minimum = %s, want %s", c.shape, got, c.want)
		}
	}
	if got := (V1Minimum{Objects: 16, MetaPatches: 6, StatusWrites: 1}).String(); got != "23 = 16+6+1" {
		t.Errorf("String = %q", got)
	}
}

// TestV1MinimumTiFlashClaims counts a PVC and a PV patch per TiFlash claim.
func TestV1MinimumTiFlashClaims(t *testing.T) {
	tc, _, err := loadShape("tiflash")
	if err != nil {
		t.Fatal(err)
	}
	tc.Spec.TiFlash.StorageClaims = append(tc.Spec.TiFlash.StorageClaims, tc.Spec.TiFlash.StorageClaims[0])
	tc.Spec.TiFlash.Replicas = 2
	if got := v1Minimum(tc).MetaPatches; got != 6+2*5 {
		t.Errorf("MetaPatches = %d, want %d", got, 6+2*5)
	}
	tc.Spec.TiDB.Service = nil
	if got := v1Minimum(tc).Objects; got != 18 {
		t.Errorf("Objects without a TiDB client Service = %d, want 18", got)
	}
}

// TestScaleBig checks that BENCH_BIG_* lower the big shape's replicas, that
// the YAML handed to render carries them, and that a bad value errors.
func TestScaleBig(t *testing.T) {
	tc, _, err := loadShape(bigShape)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BENCH_BIG_TIKV": "6", "BENCH_BIG_TIDB": "2"}
	raw, changed, err := scaleBig(tc, func(k string) string { return env[k] })
	if err != nil || !changed {
		t.Fatalf("scaleBig: changed %v, err %v", changed, err)
	}
	if tc.Spec.TiKV.Replicas != 6 || tc.Spec.TiDB.Replicas != 2 || tc.Spec.PD.Replicas != 5 {
		t.Errorf("replicas PD/TiKV/TiDB = %d/%d/%d, want 5/6/2", tc.Spec.PD.Replicas, tc.Spec.TiKV.Replicas, tc.Spec.TiDB.Replicas)
	}
	back := &v1alpha1.TidbCluster{}
	if err := yaml.UnmarshalStrict(raw, back); err != nil {
		t.Fatal(err)
	}
	if back.Spec.TiKV.Replicas != 6 || back.Spec.TiFlash.Replicas != 10 {
		t.Errorf("YAML has TiKV/TiFlash %d/%d, want 6/10", back.Spec.TiKV.Replicas, back.Spec.TiFlash.Replicas)
	}
	if got := podsPerCluster(tc); got != 5+6+2+10+4+1 {
		t.Errorf("podsPerCluster = %d", got)
	}
	if _, _, err := scaleBig(tc, func(string) string { return "0" }); err == nil {
		t.Error("BENCH_BIG_*=0 accepted")
	}
	if _, changed, _ := scaleBig(tc, func(string) string { return "" }); changed {
		t.Error("no variable set, yet changed")
	}
}
