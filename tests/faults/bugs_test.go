//go:build integration

package faults

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// bugScenarios expose known operator bugs: they fail until the fix lands and are not in the default
// subset (FAULTS=bugs or FAULTS=all runs them). docs/reliability.md has the reproductions.
func bugScenarios() []scenario {
	return []scenario{
		{name: "bug/pd-scale-out-from-1",
			bug:     "a PD created with replicas 1 then scaled to 3 never scales out (\"no quorum of healthy members\")",
			asserts: "PD created with 1 replica, then spec.pd.replicas=3: three healthy members",
			run: func(t *testing.T) {
				s := start(t, scOptions{pd: 1})
				s.patch(map[string]any{"pd": map[string]any{"replicas": 3}})
				s.waitConverged("PD scaled out to 3")
				expectMembers(s, 3)
			}},
		{name: "bug/restart-on-terminating-pvc",
			bug:     "a member whose data PVC is Terminating gets restarted by a rolling upgrade",
			asserts: "basic-tikv-2's PVC deleted by hand (Terminating: the pod holds it), then a TiKV upgrade: over 60 operator requests basic-tikv-2 is not restarted",
			run: func(t *testing.T) {
				s := start(t, scOptions{excuse: []invariant{invPVCKept}})
				pvcs := s.env.Kube.CoreV1().PersistentVolumeClaims(s.env.Namespace)
				if err := pvcs.Delete(s.env.Ctx, "tikv-basic-tikv-2", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				framework.WaitFor(t, s.env.Ctx, stepTimeout, "the PVC Terminating", func(ctx context.Context) (bool, error) {
					pvc, err := pvcs.Get(ctx, "tikv-basic-tikv-2", metav1.GetOptions{})
					return err == nil && pvc.DeletionTimestamp != nil, nil
				})
				uid := s.podUIDs("tikv")["basic-tikv-2"]
				s.patch(map[string]any{"tikv": map[string]any{"version": "v8.5.1"}})
				s.waitOperatorRequests(60, false, "the operator runs several syncs of the upgrade")
				if now := s.podUIDs("tikv")["basic-tikv-2"]; now != uid {
					t.Errorf("basic-tikv-2 was restarted (UID %s → %q) while its PVC is Terminating", uid, now)
				}
			}},
	}
}
