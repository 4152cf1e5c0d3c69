package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

// fieldErr is what the tests assert of each error: its type and exact path.
type fieldErr struct {
	Type  field.ErrorType
	Field string
}

func summarize(errs field.ErrorList) []fieldErr {
	var out []fieldErr
	for _, e := range errs {
		out = append(out, fieldErr{Type: e.Type, Field: e.Field})
	}
	return out
}

func storage(size string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}
}

func ptr[T any](v T) *T { return &v }

// validCluster is a defaulted cluster with every component that passes validation.
func validCluster() *v1alpha1.TidbCluster {
	tc := &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{
			Version: "v8.5.0",
			PD:      &v1alpha1.PDSpec{Replicas: 3, ResourceRequirements: storage("10Gi")},
			PDMS:    []*v1alpha1.PDMSSpec{{Name: "tso", Replicas: 1}, nil},
			TiKV:    &v1alpha1.TiKVSpec{Replicas: 3, ResourceRequirements: storage("100Gi")},
			TiDB:    &v1alpha1.TiDBSpec{Replicas: 2, Service: &v1alpha1.TiDBServiceSpec{}},
			TiFlash: &v1alpha1.TiFlashSpec{Replicas: 1, StorageClaims: []v1alpha1.StorageClaim{{Resources: storage("50Gi")}}},
			TiCDC:   &v1alpha1.TiCDCSpec{Replicas: 1},
			Pump:    &v1alpha1.PumpSpec{Replicas: 1, ResourceRequirements: storage("20Gi")},
			TiProxy: &v1alpha1.TiProxySpec{Replicas: 1},
		},
	}
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

type clusterCase struct {
	name   string
	mutate func(tc *v1alpha1.TidbCluster)
	want   []fieldErr
}

func runClusterCases(t *testing.T, cases []clusterCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := validCluster()
			c.mutate(tc)
			before := tc.DeepCopy()
			got := summarize(ValidateTidbCluster(tc))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ValidateTidbCluster() errors mismatch (-want +got):\n%s\nall: %v", diff, ValidateTidbCluster(tc))
			}
			if diff := cmp.Diff(before, tc, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("ValidateTidbCluster() changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestValidateTidbClusterNil(t *testing.T) {
	t.Parallel()
	if errs := ValidateTidbCluster(nil); errs != nil {
		t.Errorf("ValidateTidbCluster(nil) = %v, want none", errs)
	}
	if errs := ValidateTidbCluster(&v1alpha1.TidbCluster{}); errs != nil {
		t.Errorf("ValidateTidbCluster(empty) = %v, want none", errs)
	}
}

func TestValidateTidbClusterDeleteSlots(t *testing.T) {
	t.Parallel()
	key := func(c string) string { return "metadata.annotations[" + c + ".tidb.pingcap.com/delete-slots]" }
	annotate := func(kv ...string) func(*v1alpha1.TidbCluster) {
		return func(tc *v1alpha1.TidbCluster) {
			tc.Annotations = map[string]string{}
			for i := 0; i < len(kv); i += 2 {
				tc.Annotations[kv[i]+".tidb.pingcap.com/delete-slots"] = kv[i+1]
			}
		}
	}
	runClusterCases(t, []clusterCase{
		{name: "valid arrays", mutate: annotate("pd", "[0, 2]", "tikv", "[]", "tidb", " [5]", "tiflash", "[1]", "ticdc", "[0]", "tiproxy", "[3]")},
		{name: "other annotations ignored", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Annotations = map[string]string{"pump.tidb.pingcap.com/delete-slots": "nonsense", "x": "y"}
		}},
		{name: "not JSON", mutate: annotate("tikv", "1,2"), want: []fieldErr{{field.ErrorTypeInvalid, key("tikv")}}},
		{name: "object", mutate: annotate("pd", `{"a":1}`), want: []fieldErr{{field.ErrorTypeInvalid, key("pd")}}},
		{name: "null", mutate: annotate("tidb", "null"), want: []fieldErr{{field.ErrorTypeInvalid, key("tidb")}}},
		{name: "strings", mutate: annotate("tiflash", `["1"]`), want: []fieldErr{{field.ErrorTypeInvalid, key("tiflash")}}},
		{name: "fraction", mutate: annotate("ticdc", `[1.5]`), want: []fieldErr{{field.ErrorTypeInvalid, key("ticdc")}}},
		{name: "negative", mutate: annotate("tiproxy", `[0,-1,-2]`), want: []fieldErr{{field.ErrorTypeInvalid, key("tiproxy")}}},
	})
}

func TestValidateTidbClusterPDSource(t *testing.T) {
	t.Parallel()
	noPD := func(tc *v1alpha1.TidbCluster) { tc.Spec.PD, tc.Spec.PDMS = nil, nil }
	runClusterCases(t, []clusterCase{
		{name: "joins another cluster's PD", mutate: func(tc *v1alpha1.TidbCluster) {
			noPD(tc)
			tc.Spec.Cluster = &v1alpha1.TidbClusterRef{Name: "other"}
		}},
		{name: "joins an external PD", mutate: func(tc *v1alpha1.TidbCluster) {
			noPD(tc)
			tc.Spec.PDAddresses = []string{"http://pd.example:2379", "https://10.0.0.1:2379"}
		}},
		{name: "no PD clients", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec = v1alpha1.TidbClusterSpec{}
		}},
		{name: "no PD at all", mutate: noPD, want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}}},
		{name: "only TiDB without PD", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec = v1alpha1.TidbClusterSpec{TiDB: &v1alpha1.TiDBSpec{Replicas: 1}}
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}}},
		{name: "unnamed cluster ref", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.Cluster = &v1alpha1.TidbClusterRef{Namespace: "other"}
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.cluster.name"}}},
		{name: "bad pd addresses", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PDAddresses = []string{"http://ok:2379", "pd:2379", "ftp://pd:2379", "http://", "http://%zz", "10.0.0.1:2379"}
		}, want: []fieldErr{
			{field.ErrorTypeInvalid, "spec.pdAddresses[1]"}, {field.ErrorTypeInvalid, "spec.pdAddresses[2]"},
			{field.ErrorTypeInvalid, "spec.pdAddresses[3]"}, {field.ErrorTypeInvalid, "spec.pdAddresses[4]"},
			{field.ErrorTypeInvalid, "spec.pdAddresses[5]"},
		}},
	})
}

func TestValidateTidbClusterStartScript(t *testing.T) {
	t.Parallel()
	runClusterCases(t, []clusterCase{
		{name: "v1", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.StartScriptVersion = "v1" }},
		{name: "v2 with flags", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.StartScriptVersion = "v2"
			tc.Spec.StartScriptV2FeatureFlags = []v1alpha1.StartScriptV2FeatureFlag{"WaitForDnsNameIpMatch", "PreferPDAddressesOverDiscovery", "BashShebang", "NoWaitDNS"}
		}},
		{name: "unknown version", mutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.StartScriptVersion = "v3" },
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.startScriptVersion"}}},
		{name: "unknown flag", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.StartScriptV2FeatureFlags = []v1alpha1.StartScriptV2FeatureFlag{"NoWaitDNS", "Turbo"}
		}, want: []fieldErr{{field.ErrorTypeNotSupported, "spec.startScriptV2FeatureFlags[1]"}}},
	})
}

func TestValidateTidbClusterPDScaledToZero(t *testing.T) {
	t.Parallel()
	zeroAll := func(tc *v1alpha1.TidbCluster) {
		s := &tc.Spec
		s.PD.Replicas, s.TiKV.Replicas, s.TiDB.Replicas, s.TiFlash.Replicas = 0, 0, 0, 0
		s.TiCDC.Replicas, s.Pump.Replicas, s.TiProxy.Replicas = 0, 0, 0
	}
	want := []fieldErr{{field.ErrorTypeInvalid, "spec.pd.replicas"}}
	runClusterCases(t, []clusterCase{
		{name: "everything at zero", mutate: zeroAll},
		{name: "PD at zero behind an external PD", mutate: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD.Replicas = 0
			tc.Spec.PDAddresses = []string{"http://pd:2379"}
		}},
		{name: "PD at zero with TiKV", mutate: func(tc *v1alpha1.TidbCluster) { zeroAll(tc); tc.Spec.TiKV.Replicas = 3 }, want: want},
		{name: "PD at zero with TiDB", mutate: func(tc *v1alpha1.TidbCluster) { zeroAll(tc); tc.Spec.TiDB.Replicas = 1 }, want: want},
		{name: "PD at zero with TiFlash", mutate: func(tc *v1alpha1.TidbCluster) { zeroAll(tc); tc.Spec.TiFlash.Replicas = 1 }, want: want},
		{name: "PD at zero with TiCDC", mutate: func(tc *v1alpha1.TidbCluster) { zeroAll(tc); tc.Spec.TiCDC.Replicas = 1 }, want: want},
		{name: "PD at zero with Pump", mutate: func(tc *v1alpha1.TidbCluster) { zeroAll(tc); tc.Spec.Pump.Replicas = 1 }, want: want},
	})
}

func TestValidateTidbClusterMessages(t *testing.T) {
	t.Parallel()
	tc := validCluster()
	tc.Spec.PD.Requests = nil
	tc.Spec.PD.Replicas = 0
	got := ValidateTidbCluster(tc).ToAggregate().Error()
	want := "[spec.pd.replicas: Invalid value: 0: scaling PD to 0 would strand the other components (TiKV has replicas), " +
		"spec.pd.requests.storage: Required value: PD needs a data volume size]"
	if got != want {
		t.Errorf("ValidateTidbCluster() = %q, want %q", got, want)
	}
}

// TestValidateTidbClusterLoneComponents validates clusters holding a single
// zero-valued component, undefaulted and defaulted: nothing may panic, and
// every component that talks to PD reports the missing PD.
func TestValidateTidbClusterLoneComponents(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		spec v1alpha1.TidbClusterSpec
		want []fieldErr
	}{
		"pd": {spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{}},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd.requests.storage"}}},
		"pdms": {spec: v1alpha1.TidbClusterSpec{PDMS: []*v1alpha1.PDMSSpec{nil, {}}}},
		"tikv": {spec: v1alpha1.TidbClusterSpec{TiKV: &v1alpha1.TiKVSpec{}},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}, {field.ErrorTypeRequired, "spec.tikv.requests.storage"}}},
		"tidb": {spec: v1alpha1.TidbClusterSpec{TiDB: &v1alpha1.TiDBSpec{}},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}}},
		"tiflash": {spec: v1alpha1.TidbClusterSpec{TiFlash: &v1alpha1.TiFlashSpec{}},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}, {field.ErrorTypeRequired, "spec.tiflash.storageClaims"}}},
		"ticdc": {spec: v1alpha1.TidbClusterSpec{TiCDC: &v1alpha1.TiCDCSpec{}},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}}},
		"pump": {spec: v1alpha1.TidbClusterSpec{Pump: &v1alpha1.PumpSpec{}},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}, {field.ErrorTypeRequired, "spec.pump.requests.storage"}}},
		"tiproxy": {spec: v1alpha1.TidbClusterSpec{TiProxy: &v1alpha1.TiProxySpec{}},
			want: []fieldErr{{field.ErrorTypeRequired, "spec.pd"}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{Spec: *c.spec.DeepCopy()}
			if diff := cmp.Diff(c.want, summarize(ValidateTidbCluster(tc))); diff != "" {
				t.Errorf("undefaulted: errors mismatch (-want +got):\n%s", diff)
			}
			defaulting.SetTidbClusterDefaults(tc)
			if diff := cmp.Diff(c.want, summarize(ValidateTidbCluster(tc))); diff != "" {
				t.Errorf("defaulted: errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
