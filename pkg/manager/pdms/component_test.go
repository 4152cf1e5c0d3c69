package pdms

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/pdmsapi"
)

// fakeAPI answers from its fields and records the transfers asked.
type fakeAPI struct {
	members   []string
	primary   string
	healthy   bool
	err       error
	transfers []string
}

func (f *fakeAPI) Members(context.Context, string, string, string, pdmsapi.Options) ([]string, error) {
	return f.members, f.err
}

func (f *fakeAPI) Primary(context.Context, string, string, string, pdmsapi.Options) (string, error) {
	return f.primary, f.err
}

func (f *fakeAPI) Healthy(context.Context, string, string, pdmsapi.Options) (bool, error) {
	return f.healthy, nil
}

func (f *fakeAPI) TransferPrimary(_ context.Context, _, _, _, to string, _ pdmsapi.Options) error {
	f.transfers = append(f.transfers, to)
	return f.err
}

func addr(pod string) string { return "http://" + pod + ".basic-tso-peer.ns.svc:2379" }

func TestEnabledOnlyWithModeMSAndTheEntry(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, msCluster)
	tso, sched := NewTSO(&component.Env{}), NewScheduling(&component.Env{})
	if !tso.Enabled(tc) || !sched.Enabled(tc) {
		t.Fatal("mode ms with both entries: both services run")
	}
	tc.Spec.PD.Mode = ""
	if tso.Enabled(tc) || sched.Enabled(tc) {
		t.Error("without mode ms no service runs")
	}
	tc.Spec.PD.Mode = "ms"
	tc.Spec.PDMS = tc.Spec.PDMS[1:]
	if tso.Enabled(tc) || !sched.Enabled(tc) {
		t.Error("only scheduling listed: only scheduling runs")
	}
	tc.Spec.PD = nil
	if sched.Enabled(tc) {
		t.Error("without spec.pd no service runs")
	}
}

func TestObserveKeepsMembersWhenPDDoesNotAnswer(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, msCluster)
	api := &fakeAPI{members: []string{addr("basic-tso-1"), addr("basic-tso-0")}, healthy: true}
	c := NewWithClient("tso", api)
	if err := c.Observe(context.Background(), tc, &appsv1.StatefulSet{}); err != nil {
		t.Fatal(err)
	}
	st := tc.Status.PDMS["tso"]
	if !st.Synced || len(st.Members) != 2 || st.Members[0] != addr("basic-tso-0") || !st.Healthy || st.Name != "tso" {
		t.Fatalf("status %+v, want 2 sorted members, synced and healthy", st)
	}
	if !c.PodHealthy(tc, "basic-tso-1") || c.PodHealthy(tc, "basic-tso-2") {
		t.Error("PodHealthy does not follow PD's members")
	}
	api.err, api.members, api.healthy = errors.New("PD down"), nil, false
	if err := c.Observe(context.Background(), tc, &appsv1.StatefulSet{}); err != nil {
		t.Fatal(err)
	}
	if st := tc.Status.PDMS["tso"]; !st.Synced || len(st.Members) != 2 || st.Healthy {
		t.Errorf("status %+v after a failed listing, want the members kept and tso unhealthy", st)
	}
	if err := c.Observe(context.Background(), tc, nil); err != nil || tc.Status.PDMS["tso"].Synced {
		t.Errorf("without a StatefulSet the status is cleared: %v %+v", err, tc.Status.PDMS["tso"])
	}
}

func TestPreUpgradeMovesThePrimaryToTheHighestOtherMember(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, msCluster)
	tc.Status.PDMS = map[string]*v1alpha1.PDMSStatus{"tso": {Name: "tso", Synced: true,
		Members: []string{addr("basic-tso-0"), addr("basic-tso-1"), addr("basic-tso-2")}}}
	api := &fakeAPI{primary: addr("basic-tso-0")}
	c := NewWithClient("tso", api)
	if err := c.PreUpgradePod(context.Background(), tc, 2); err != nil || len(api.transfers) != 0 {
		t.Fatalf("a pod that is not primary restarts at once: %v, transfers %v", err, api.transfers)
	}
	err := c.PreUpgradePod(context.Background(), tc, 0)
	if _, wait := flow.AsRequeue(err); !wait || len(api.transfers) != 1 || api.transfers[0] != "basic-tso-2" {
		t.Fatalf("primary basic-tso-0: %v, transfers %v; want a wait and a transfer to basic-tso-2", err, api.transfers)
	}
	api.primary = addr("basic-tso-2")
	if err := c.PreUpgradePod(context.Background(), tc, 0); err != nil {
		t.Errorf("once PD names another primary the pod restarts: %v", err)
	}
	tc.Status.PDMS["tso"].Members = []string{addr("basic-tso-0")}
	api.primary = addr("basic-tso-0")
	if err := c.PreUpgradePod(context.Background(), tc, 0); err != nil || len(api.transfers) != 1 {
		t.Errorf("no other member: restart without a transfer (as v1.6): %v, transfers %v", err, api.transfers)
	}
	old := "v8.2.0"
	tc.Spec.PDMS[0].Version = &old
	tc.Status.PDMS["tso"].Members = []string{addr("basic-tso-0"), addr("basic-tso-1")}
	if err := c.PreUpgradePod(context.Background(), tc, 0); err != nil || len(api.transfers) != 1 {
		t.Errorf("before v8.3.0 there is no primary handling: %v, transfers %v", err, api.transfers)
	}
}

func TestMemberNameFollowsTheClusterDomain(t *testing.T) {
	t.Parallel()
	tc := golden.Cluster(t, msCluster)
	if got := memberName(tc, "tso", "basic-tso-1"); got != "basic-tso-1" {
		t.Errorf("member name %q", got)
	}
	tc.Spec.ClusterDomain = "c.local"
	if got := memberName(tc, "tso", "basic-tso-1"); got != "basic-tso-1.basic-tso-peer.ns.svc.c.local" {
		t.Errorf("member name with a cluster domain %q", got)
	}
}
