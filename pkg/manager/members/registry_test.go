package members_test

import (
	"slices"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
)

// TestRegistryFollowsTheDescriptors keeps the sync order and the
// descriptors in step: every descriptor has exactly one registered
// component of its name, in SyncRank order, and no component runs
// without a descriptor.
func TestRegistryFollowsTheDescriptors(t *testing.T) {
	t.Parallel()
	var got []string
	for _, c := range members.Components(members.New(&component.Env{})) {
		got = append(got, c.Name())
	}
	var want []string
	for _, d := range components.InSyncOrder() {
		want = append(want, d.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("registered components %v, descriptors in sync order %v", got, want)
	}
}
