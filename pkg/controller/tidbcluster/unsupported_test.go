package tidbcluster

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// TestUnsupportedFieldsAreNamedOnce checks that components and fields the
// operator does not act on yet are named in the Unsupported condition and
// in one Warning event, that a resync repeats neither, and that a component
// no Component runs never holds Ready back.
func TestUnsupportedFieldsAreNamedOnce(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	tc := newTC()
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 1, StorageClaims: []v1alpha1.StorageClaim{
		{Resources: tc.Spec.PD.ResourceRequirements}}}
	tc.Spec.TiCDC = &v1alpha1.TiCDCSpec{Replicas: 1}
	tc.Spec.PD.Mode = "ms"
	tc.Spec.TiDB.Initializer = &v1alpha1.TiDBInitializer{CreatePassword: true}
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), tc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	comps := []Component{newStatefulStub(t, "pd"), newStatefulStub(t, "tikv"), newStatefulStub(t, "tidb")}
	control := NewDefaultControl(comps, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)

	got, err := syncOnce(t, deps, control, "basic")
	if err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterUnsupported)
	want := "spec.pd.mode (PD runs as one service without spec.pdms, as in the TiDB Operator), spec.ticdc, spec.tiflash" // createPassword (set above) is acted on: not listed
	if cond == nil || cond.Status != metav1.ConditionTrue || !strings.HasSuffix(cond.Message, want) {
		t.Fatalf("Unsupported = %+v, want True naming %s", cond, want)
	}
	if ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterReady); ready == nil ||
		strings.Contains(ready.Message, "tiflash") {
		t.Errorf("an unbuilt component must not hold Ready back: %+v", ready)
	}
	select {
	case ev := <-deps.FakeRecorder.Events:
		if !strings.HasPrefix(ev, "Warning Unsupported") || !strings.Contains(ev, want) {
			t.Fatalf("event %q", ev)
		}
	default:
		t.Fatal("no Unsupported event")
	}
	deps.FakePingcap.ClearActions()
	if _, err := syncOnce(t, deps, control, "basic"); err != nil {
		t.Fatal(err)
	}
	if w := writes(deps); len(w) != 0 {
		t.Errorf("a resync must not write, got %v", w)
	}
	select {
	case ev := <-deps.FakeRecorder.Events:
		t.Fatalf("repeated event %q", ev)
	default:
	}
}

func TestUnsupportedFieldsFollowBuiltComponents(t *testing.T) {
	t.Parallel()
	tc := newTC()
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 1}
	if got := unsupportedFields(tc, map[string]bool{"tiflash": true}); len(got) != 0 {
		t.Errorf("a built TiFlash is supported, got %v", got)
	}
	if got := unsupportedFields(newTC(), nil); len(got) != 0 {
		t.Errorf("a basic cluster sets nothing unsupported, got %v", got)
	}
}

// TestStartScriptV2AndDiscoveryTokenAreActedOn: the v2 start scripts, their
// feature flags and discovery without an automatic token are acted on, so
// the Unsupported condition no longer names them.
func TestStartScriptV2AndDiscoveryTokenAreActedOn(t *testing.T) {
	t.Parallel()
	tc := newTC()
	no := false
	tc.Spec.StartScriptVersion = "v2"
	tc.Spec.StartScriptV2FeatureFlags = []v1alpha1.StartScriptV2FeatureFlag{"WaitForDnsNameIpMatch", "NoWaitDNS"}
	tc.Spec.Discovery.AutomountServiceAccountToken = &no
	if got := unsupportedFields(tc, nil); len(got) != 0 {
		t.Errorf("named as unsupported: %v", got)
	}
}

// TestStartScriptV2NamesComponentsWithOneScript: TiFlash, TiCDC and Pump
// have no v2 script here, so v2 with one of them is named.
func TestStartScriptV2NamesComponentsWithOneScript(t *testing.T) {
	t.Parallel()
	tc := newTC()
	tc.Spec.StartScriptVersion = "v2"
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 1}
	tc.Spec.Pump = &v1alpha1.PumpSpec{Replicas: 1}
	got := unsupportedFields(tc, map[string]bool{"tiflash": true, "pump": true})
	if want := []string{"spec.startScriptVersion (v2 for tiflash, pump)"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	tc.Spec.StartScriptVersion = "v1"
	if got := unsupportedFields(tc, map[string]bool{"tiflash": true, "pump": true}); len(got) != 0 {
		t.Errorf("v1 with TiFlash and Pump: got %v", got)
	}
}

// TestDeleteSlotsAnnotationIsNamed: a delete-slots annotation with slots
// is named (it needs Advanced StatefulSet); an empty list is not.
func TestDeleteSlotsAnnotationIsNamed(t *testing.T) {
	t.Parallel()
	tc := newTC()
	tc.Annotations = map[string]string{"tikv.tidb.pingcap.com/delete-slots": "[1]", "pd.tidb.pingcap.com/delete-slots": "[]"}
	got := unsupportedFields(tc, nil)
	if len(got) != 1 || !strings.HasPrefix(got[0], "metadata.annotations.tikv.tidb.pingcap.com/delete-slots (needs Advanced StatefulSet") {
		t.Errorf("got %v, want the TiKV delete-slots annotation named", got)
	}
}
