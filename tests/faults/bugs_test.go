//go:build integration

package faults

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// bugScenarios expose known operator bugs: they fail until the fix lands and are not in the default
// subset (FAULTS=bugs or FAULTS=all runs them); docs/reliability.md has the reproductions. None is
// open today.
func bugScenarios() []scenario { return nil }

// fixedScenarios reproduce the bugs found last: the sync that applied a new TiKV template wrote
// Ready=True at the new generation before any pod restarted; a StatefulSet whose managed-by label
// was changed by hand left the label-filtered cache and every sync failed creating it.
func fixedScenarios() []scenario {
	return []scenario{
		{name: "regress/ready-before-rollout",
			asserts: "TiKV config changed on a converged cluster: every status written for the new generation (watched " +
				"from before the patch, none missed) that reads Ready with TiKV Normal finds the TiKV StatefulSet rolled out",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				cur, err := s.tc(s.env.Ctx)
				if err != nil {
					t.Fatal(err)
				}
				w, err := s.pc.PingcapV1alpha1().TidbClusters(s.env.Namespace).Watch(s.env.Ctx, metav1.ListOptions{
					FieldSelector: "metadata.name=basic", ResourceVersion: cur.ResourceVersion})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				s.patch(map[string]any{"tikv": map[string]any{"config": map[string]any{"log-level": "warn"}}})
				ctx, cancel := context.WithTimeout(s.env.Ctx, readyTimeout)
				defer cancel()
				for judged := false; !judged; {
					var tc *v1alpha1.TidbCluster
					select {
					case ev, ok := <-w.ResultChan():
						if !ok {
							t.Fatal("the TidbCluster watch ended before a Ready status of the new generation")
						}
						if tc, ok = ev.Object.(*v1alpha1.TidbCluster); !ok {
							t.Fatalf("watch event %s: %T", ev.Type, ev.Object)
						}
					case <-ctx.Done():
						t.Fatalf("no status reported Ready at the new generation within %s", readyTimeout)
					}
					if tc.Generation == cur.Generation || !rolloutFinished(tc) {
						continue
					}
					sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(ctx, "basic-tikv", metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					judged = stsRolledOut(sts)
					s.chk.check(invReadyRolledOut, judged,
						"TidbCluster resourceVersion %s reads Ready at generation %d with TiKV Normal (status: TiKV StatefulSet %s) while StatefulSet basic-tikv is at generation %d, %s",
						tc.ResourceVersion, tc.Generation, rolloutOf(tc.Status.TiKV.StatefulSet), sts.Generation, rolloutOf(&sts.Status))
					if !judged {
						break // the first premature Ready is the finding; the rollout still has to converge
					}
				}
				s.waitConverged("the TiKV config rollout converges")
			}},
		{name: "edit/tikv-sts-labels",
			asserts: "TiKV StatefulSet labels changed by hand (managed-by changed, component removed): the operator restores them",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				s.editSTS("tikv", func(sts *appsv1.StatefulSet) {
					sts.Labels["app.kubernetes.io/managed-by"] = "someone-else"
					delete(sts.Labels, "app.kubernetes.io/component")
				})
				s.waitSTS("tikv", "the operator restores the labels", func(sts *appsv1.StatefulSet) bool {
					return sts.Labels["app.kubernetes.io/managed-by"] == "tidb-operator" && sts.Labels["app.kubernetes.io/component"] == "tikv"
				})
				s.waitConverged("converged after the label edit")
			}},
	}
}

// regressionScenarios reproduce operator bugs this suite found and that were fixed since.
func regressionScenarios() []scenario {
	return append(fixedScenarios(), []scenario{
		{name: "regress/pd-scale-out-from-1",
			asserts: "PD created with 1 replica, then spec.pd.replicas=3: three healthy members (was stuck on \"no quorum of healthy members\")",
			run: func(t *testing.T) {
				s := start(t, scOptions{pd: 1})
				s.patch(map[string]any{"pd": map[string]any{"replicas": 3}})
				s.waitConverged("PD scaled out to 3")
				expectMembers(s, 3)
			}},
		{name: "regress/restart-on-terminating-pvc",
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
	}...)
}
