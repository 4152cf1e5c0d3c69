package pd

import (
	"context"
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// BenchmarkObserveMembers is PD's part of every sync, converged or not:
// health, leader and cluster ID read from (a fake) PD and folded into
// status.pd, for 1, 3 and 5 healthy members. The fake records each call,
// so its log is reset outside the timer now and then.
func BenchmarkObserveMembers(b *testing.B) {
	for _, n := range []int{1, 3, 5} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tc := basicTC()
			defaulting.SetTidbClusterDefaults(tc)
			fc := pdapi.NewFakeControl()
			client := fc.ClusterClient(tc.Namespace, tc.Name)
			var health pdapi.HealthInfo
			for i := range n {
				name := fmt.Sprintf("%s-pd-%d", tc.Name, i)
				url := fmt.Sprintf("http://%s.%s-pd-peer.%s.svc:2379", name, tc.Name, tc.Namespace)
				health = append(health, pdapi.MemberHealth{Name: name, MemberID: uint64(i) + 1, Health: true, ClientUrls: []string{url}})
			}
			client.SetHealth(health)
			client.SetMembers(health[0].Name, &pdapi.Member{Name: health[0].Name, MemberID: 1})
			client.SetCluster(pdapi.Cluster{ID: 42})
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := observeMembers(ctx, fc, clk, tc); err != nil {
					b.Fatal(err)
				}
				if i%1024 == 1023 {
					b.StopTimer()
					client.ResetCalls()
					b.StartTimer()
				}
			}
			if len(tc.Status.PD.Members) != n {
				b.Fatalf("observed %d members, want %d", len(tc.Status.PD.Members), n)
			}
		})
	}
}

// BenchmarkNewStatefulSet builds PD's StatefulSet, the largest object of a
// component, as every sync does.
func BenchmarkNewStatefulSet(b *testing.B) {
	tc := basicTC()
	defaulting.SetTidbClusterDefaults(tc)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newStatefulSet(tc, "basic-pd-0123abc"); err != nil {
			b.Fatal(err)
		}
	}
}
