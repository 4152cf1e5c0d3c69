package defaulting

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// cmpOpts compares resource quantities by value; cmp cannot look inside them.
var cmpOpts = cmp.Options{cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })}

// minimalCluster has every component with nothing but replicas set.
func minimalCluster() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{
			Version: "v8.5.0",
			PD:      &v1alpha1.PDSpec{Replicas: 3},
			PDMS:    []*v1alpha1.PDMSSpec{{Name: "tso", Replicas: 1}, nil},
			TiKV:    &v1alpha1.TiKVSpec{Replicas: 3},
			TiDB:    &v1alpha1.TiDBSpec{Replicas: 2},
			TiFlash: &v1alpha1.TiFlashSpec{Replicas: 1},
			TiCDC:   &v1alpha1.TiCDCSpec{Replicas: 1},
			Pump:    &v1alpha1.PumpSpec{Replicas: 1},
			TiProxy: &v1alpha1.TiProxySpec{Replicas: 1},
		},
	}
}

// defaultedMinimalCluster is minimalCluster with every default of spec §2 spelled out.
func defaultedMinimalCluster() *v1alpha1.TidbCluster {
	tc := minimalCluster()
	s := &tc.Spec
	s.ImagePullPolicy = corev1.PullIfNotPresent
	s.Timezone = "UTC"
	s.PVReclaimPolicy = ptr(corev1.PersistentVolumeReclaimRetain)
	s.EnablePVReclaim = ptr(false)
	s.TLSCluster = &v1alpha1.TLSCluster{}
	s.Helper = &v1alpha1.HelperSpec{Image: ptr("busybox:1.26.2")}
	one := v1alpha1.ScalePolicy{ScaleInParallelism: ptr[int32](1), ScaleOutParallelism: ptr[int32](1)}

	s.PD.BaseImage, s.PD.StartTimeout = "pingcap/pd", 30
	s.PD.MaxFailoverCount, s.PD.SpareVolReplaceReplicas = ptr[int32](3), ptr[int32](1)
	s.PDMS[0].BaseImage, s.PDMS[0].StartTimeout = ptr("pingcap/pd"), 30
	s.TiKV.BaseImage, s.TiKV.ScalePolicy = "pingcap/tikv", *one.DeepCopy()
	s.TiKV.MaxFailoverCount, s.TiKV.SpareVolReplaceReplicas = ptr[int32](3), ptr[int32](1)
	s.TiKV.EvictLeaderTimeout = ptr("1500m")
	s.TiKV.WaitLeaderTransferBackTimeout = &metav1.Duration{Duration: 400 * time.Second}
	s.TiDB.BaseImage, s.TiDB.ScalePolicy = "pingcap/tidb", *one.DeepCopy()
	s.TiDB.MaxFailoverCount, s.TiDB.SeparateSlowLog = ptr[int32](3), ptr(true)
	s.TiFlash.BaseImage, s.TiFlash.ScalePolicy = "pingcap/tiflash", *one.DeepCopy()
	s.TiFlash.MaxFailoverCount = ptr[int32](3)
	s.TiCDC.BaseImage = "pingcap/ticdc"
	s.TiCDC.GracefulShutdownTimeout = &metav1.Duration{Duration: 10 * time.Minute}
	s.Pump.BaseImage = "pingcap/tidb-binlog"
	s.TiProxy.BaseImage = "pingcap/tiproxy"
	return tc
}

// userCluster sets every defaulted field to a non-default value.
func userCluster() *v1alpha1.TidbCluster {
	tc := minimalCluster()
	s := &tc.Spec
	s.ImagePullPolicy = corev1.PullAlways
	s.Timezone = "Asia/Shanghai"
	s.PVReclaimPolicy = ptr(corev1.PersistentVolumeReclaimDelete)
	s.EnablePVReclaim = ptr(true)
	s.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	s.Helper = &v1alpha1.HelperSpec{Image: ptr("alpine:3")}
	two := v1alpha1.ScalePolicy{ScaleInParallelism: ptr[int32](2), ScaleOutParallelism: ptr[int32](4)}

	s.PD.BaseImage, s.PD.StartTimeout = "my/pd", 60
	s.PD.MaxFailoverCount, s.PD.SpareVolReplaceReplicas = ptr[int32](0), ptr[int32](0)
	s.PDMS[0].BaseImage, s.PDMS[0].StartTimeout = ptr("my/pd"), 5
	s.TiKV.BaseImage, s.TiKV.ScalePolicy = "my/tikv", *two.DeepCopy()
	s.TiKV.MaxFailoverCount, s.TiKV.SpareVolReplaceReplicas = ptr[int32](0), ptr[int32](2)
	s.TiKV.EvictLeaderTimeout = ptr("10m")
	s.TiKV.WaitLeaderTransferBackTimeout = &metav1.Duration{Duration: time.Second}
	s.TiDB.BaseImage, s.TiDB.ScalePolicy = "my/tidb", *two.DeepCopy()
	s.TiDB.MaxFailoverCount, s.TiDB.SeparateSlowLog = ptr[int32](1), ptr(false)
	s.TiDB.Service = &v1alpha1.TiDBServiceSpec{ExposeStatus: ptr(false)}
	s.TiDB.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"file": map[string]any{"max-backups": json.Number("7")}}})
	s.TiFlash.BaseImage, s.TiFlash.ScalePolicy = "my/tiflash", *two.DeepCopy()
	s.TiFlash.MaxFailoverCount = ptr[int32](0)
	s.TiCDC.BaseImage = "my/ticdc"
	s.TiCDC.GracefulShutdownTimeout = &metav1.Duration{Duration: time.Minute}
	s.Pump.BaseImage = "my/pump"
	s.TiProxy.BaseImage = "my/tiproxy"
	return tc
}

func TestSetTidbClusterDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   *v1alpha1.TidbCluster
		want *v1alpha1.TidbCluster
	}{
		{name: "nil cluster", in: nil, want: nil},
		{name: "every component minimal", in: minimalCluster(), want: defaultedMinimalCluster()},
		{name: "does not overwrite user values", in: userCluster(), want: userCluster()},
		{
			name: "no components: cluster-level defaults only",
			in:   &v1alpha1.TidbCluster{},
			want: &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{
				ImagePullPolicy: corev1.PullIfNotPresent, Timezone: "UTC",
				PVReclaimPolicy: ptr(corev1.PersistentVolumeReclaimRetain), EnablePVReclaim: ptr(false),
				TLSCluster: &v1alpha1.TLSCluster{}, Helper: &v1alpha1.HelperSpec{Image: ptr("busybox:1.26.2")},
			}},
		},
		{
			name: "helper with pull policy only gets the image",
			in:   &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{Helper: &v1alpha1.HelperSpec{ImagePullPolicy: ptr(corev1.PullNever), Image: ptr("")}}},
			want: &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{
				ImagePullPolicy: corev1.PullIfNotPresent, Timezone: "UTC",
				PVReclaimPolicy: ptr(corev1.PersistentVolumeReclaimRetain), EnablePVReclaim: ptr(false),
				TLSCluster: &v1alpha1.TLSCluster{},
				Helper:     &v1alpha1.HelperSpec{Image: ptr("busybox:1.26.2"), ImagePullPolicy: ptr(corev1.PullNever)},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.in.DeepCopy()
			SetTidbClusterDefaults(got)
			if diff := cmp.Diff(tc.want, got, cmpOpts); diff != "" {
				t.Errorf("SetTidbClusterDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetTidbClusterDefaultsIsIdempotent(t *testing.T) {
	t.Parallel()
	withConfig := minimalCluster()
	withConfig.Spec.TiDB.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn"}})
	withConfig.Spec.TiDB.Service = &v1alpha1.TiDBServiceSpec{}
	cases := map[string]*v1alpha1.TidbCluster{
		"minimal": minimalCluster(), "user values": userCluster(), "empty": {}, "tidb config and service": withConfig,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			once := in.DeepCopy()
			SetTidbClusterDefaults(once)
			twice := once.DeepCopy()
			SetTidbClusterDefaults(twice)
			if diff := cmp.Diff(once, twice, cmpOpts); diff != "" {
				t.Errorf("second SetTidbClusterDefaults() changed the cluster (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestSetTidbClusterDefaultsBaseImage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                                  string
		clusterVersion, componentVersion      string
		baseImage, legacyImage                string
		wantBaseImage, wantAccessorImageAfter string
	}{
		{name: "cluster version", clusterVersion: "v8.5.0", wantBaseImage: "pingcap/pd", wantAccessorImageAfter: "pingcap/pd:v8.5.0"},
		{name: "component version wins", clusterVersion: "v8.5.0", componentVersion: "v7.5.0", wantBaseImage: "pingcap/pd", wantAccessorImageAfter: "pingcap/pd:v7.5.0"},
		{name: "user base image", clusterVersion: "v8.5.0", baseImage: "reg/pd", wantBaseImage: "reg/pd", wantAccessorImageAfter: "reg/pd:v8.5.0"},
		{name: "no version, no image: untagged default", wantBaseImage: "pingcap/pd", wantAccessorImageAfter: "pingcap/pd"},
		{name: "legacy image without version is kept", legacyImage: "reg/pd:v6", wantBaseImage: "", wantAccessorImageAfter: "reg/pd:v6"},
		{name: "version beats legacy image", clusterVersion: "v8.5.0", legacyImage: "reg/pd:v6", wantBaseImage: "pingcap/pd", wantAccessorImageAfter: "pingcap/pd:v8.5.0"},
		{name: "base image without version", baseImage: "reg/pd", wantBaseImage: "reg/pd", wantAccessorImageAfter: "reg/pd"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{Version: c.clusterVersion, PD: &v1alpha1.PDSpec{BaseImage: c.baseImage}}}
			tc.Spec.PD.Image = c.legacyImage
			if c.componentVersion != "" {
				tc.Spec.PD.Version = ptr(c.componentVersion)
			}
			before := NewComponentAccessor(tc, ComponentPD).Image()
			SetTidbClusterDefaults(tc)
			if got := tc.Spec.PD.BaseImage; got != c.wantBaseImage {
				t.Errorf("baseImage = %q, want %q", got, c.wantBaseImage)
			}
			after := NewComponentAccessor(tc, ComponentPD).Image()
			if after != c.wantAccessorImageAfter || before != after {
				t.Errorf("Image() before defaulting %q, after %q, want %q both times", before, after, c.wantAccessorImageAfter)
			}
		})
	}
}

func TestSetTidbClusterDefaultsTiDBConfig(t *testing.T) {
	t.Parallel()
	maxBackups := map[string]any{"log": map[string]any{"file": map[string]any{"max-backups": int64(3)}}}
	cases := []struct {
		name string
		in   *v1alpha1.Config
		want *v1alpha1.Config
	}{
		{name: "no config stays nil", in: nil, want: nil},
		{name: "empty config", in: &v1alpha1.Config{}, want: &v1alpha1.Config{Items: maxBackups}},
		{
			name: "merges into existing tables",
			in:   v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn", "file": map[string]any{"max-days": int64(1)}}}),
			want: v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn", "file": map[string]any{"max-days": int64(1), "max-backups": int64(3)}}}),
		},
		{
			name: "user value kept",
			in:   v1alpha1.NewConfig(map[string]any{"log": map[string]any{"file": map[string]any{"max-backups": json.Number("10")}}}),
			want: v1alpha1.NewConfig(map[string]any{"log": map[string]any{"file": map[string]any{"max-backups": json.Number("10")}}}),
		},
		{
			name: "non-table log left alone",
			in:   v1alpha1.NewConfig(map[string]any{"log": "stderr"}),
			want: v1alpha1.NewConfig(map[string]any{"log": "stderr"}),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{TiDB: &v1alpha1.TiDBSpec{Config: c.in.DeepCopy()}}}
			SetTidbClusterDefaults(tc)
			if diff := cmp.Diff(c.want, tc.Spec.TiDB.Config); diff != "" {
				t.Errorf("TiDB config mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetTidbClusterDefaultsTiDBService(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   *v1alpha1.TiDBServiceSpec
		want *v1alpha1.TiDBServiceSpec
	}{
		{name: "no service stays nil", in: nil, want: nil},
		{name: "service exposes status", in: &v1alpha1.TiDBServiceSpec{}, want: &v1alpha1.TiDBServiceSpec{ExposeStatus: ptr(true)}},
		{name: "false kept", in: &v1alpha1.TiDBServiceSpec{ExposeStatus: ptr(false)}, want: &v1alpha1.TiDBServiceSpec{ExposeStatus: ptr(false)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{TiDB: &v1alpha1.TiDBSpec{Service: c.in}}}
			SetTidbClusterDefaults(tc)
			if diff := cmp.Diff(c.want, tc.Spec.TiDB.Service); diff != "" {
				t.Errorf("TiDB service mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetTidbClusterDefaultsEmptyEvictLeaderTimeout(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{TiKV: &v1alpha1.TiKVSpec{EvictLeaderTimeout: ptr("")}}}
	SetTidbClusterDefaults(tc)
	if got := *tc.Spec.TiKV.EvictLeaderTimeout; got != "1500m" {
		t.Errorf("evictLeaderTimeout = %q, want 1500m", got)
	}
}
