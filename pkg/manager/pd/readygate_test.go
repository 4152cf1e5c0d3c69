package pd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestPostUpgradePodWaitsUntilTheRestartedMemberIsReady: the member that
// restarted is asked itself (not the Service) and holds the rollout while
// it answers not ready; ready, or a PD that cannot tell, lets it go on; an
// unreachable member is an error, never a go-ahead.
func TestPostUpgradePodWaitsUntilTheRestartedMemberIsReady(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Name, tc.Namespace = "basic", "ns"
	tc.Spec.PD = &v1alpha1.PDSpec{Replicas: 3}
	ctl := pdapi.NewFakeControl()
	member := ctl.MemberClient("ns", "basic", "basic-pd-1")
	c := New(&component.Env{PD: ctl})

	member.SetReady(false)
	err := c.PostUpgradePod(context.Background(), tc, 1)
	if re, waiting := flow.AsRequeue(err); !waiting || !strings.Contains(re.Reason, "basic-pd-1") {
		t.Fatalf("PostUpgradePod = %v, want a wait naming basic-pd-1", err)
	}
	if n := len(ctl.ClusterClient("ns", "basic").Calls()); n != 0 {
		t.Errorf("the cluster Service was asked %d times; readiness is the member's own", n)
	}

	member.SetReady(true)
	if err := c.PostUpgradePod(context.Background(), tc, 1); err != nil {
		t.Fatalf("PostUpgradePod of a ready member = %v, want nil", err)
	}

	member.SetError(pdapi.MethodGetReady, errors.New("connection refused"))
	err = c.PostUpgradePod(context.Background(), tc, 1)
	if _, waiting := flow.AsRequeue(err); err == nil || waiting {
		t.Fatalf("PostUpgradePod of an unreachable member = %v, want an error", err)
	}
}
