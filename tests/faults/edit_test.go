//go:build integration

package faults

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// editSTS changes a StatefulSet by hand, as a user with kubectl edit would.
func (s *sc) editSTS(component string, edit func(*appsv1.StatefulSet)) {
	s.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(s.env.Ctx, "basic-"+component, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(sts)
		_, err = s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Update(s.env.Ctx, sts, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("edit StatefulSet basic-%s: %v", component, err)
	}
}

// waitRecreated waits until get finds the object again with a UID other than old.
func (s *sc) waitRecreated(desc string, old types.UID, get func(ctx context.Context) (types.UID, error)) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, desc, func(ctx context.Context) (bool, error) {
		uid, err := get(ctx)
		if apierrors.IsNotFound(err) {
			framework.Observef(ctx, "not found")
			return false, nil
		}
		return err == nil && uid != old, err
	})
}

// tidbImage points at the image of the tidb container of sts.
func tidbImage(sts *appsv1.StatefulSet) *string {
	cs := sts.Spec.Template.Spec.Containers
	for i := range cs {
		if cs[i].Name == "tidb" {
			return &cs[i].Image
		}
	}
	return &cs[0].Image
}

// editScenarios: owned objects deleted or edited by hand.
func editScenarios() []scenario {
	return []scenario{
		{name: "edit/tikv-sts-replicas-up",
			asserts: "TiKV StatefulSet scaled 3→4 by hand: the operator brings it back to 3 only through store deletion (Tombstone first)",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				s.editSTS("tikv", func(sts *appsv1.StatefulSet) { sts.Spec.Replicas = ptr(int32(4)) })
				s.waitConverged("the operator restores 3 TiKV replicas")
				if id := storeOf(s.mustState(), "basic-tikv-3"); id != 0 {
					t.Errorf("basic-tikv-3 left a live store %d", id)
				}
			}},
		{name: "edit/pd-sts-replicas-down",
			asserts: "PD StatefulSet scaled 3→2 by hand: the operator restores 3 healthy members",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				s.editSTS("pd", func(sts *appsv1.StatefulSet) { sts.Spec.Replicas = ptr(int32(2)) })
				s.waitConverged("the operator restores 3 PD replicas")
				expectMembers(s, 3)
			}},
		{name: "edit/tidb-sts-image",
			asserts: "TiDB StatefulSet image changed by hand: the operator restores the spec's image and the pods roll back",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				s.editSTS("tidb", func(sts *appsv1.StatefulSet) { *tidbImage(sts) = "pingcap/tidb:v0.0.1-by-hand" })
				s.waitSTS("tidb", "the operator restores the TiDB image", func(sts *appsv1.StatefulSet) bool {
					return *tidbImage(sts) == "pingcap/tidb:v8.5.0"
				})
				s.waitConverged("converged after the image edit")
				s.expectImages("tidb", "v8.5.0")
			}},
		{name: "edit/delete-services",
			asserts: "PD, PD peer, TiKV peer and TiDB Services deleted: the operator recreates them",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				for _, name := range []string{"basic-pd", "basic-pd-peer", "basic-tikv-peer", "basic-tidb"} {
					svcs := s.env.Kube.CoreV1().Services(s.env.Namespace)
					old, err := svcs.Get(s.env.Ctx, name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if err := svcs.Delete(s.env.Ctx, name, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					s.waitRecreated("Service "+name+" recreated", old.UID, func(ctx context.Context) (types.UID, error) {
						o, err := svcs.Get(ctx, name, metav1.GetOptions{})
						if err != nil {
							return "", err
						}
						return o.UID, nil
					})
				}
				s.waitConverged("converged after the Services came back")
			}},
		{name: "edit/delete-configmaps", representative: true,
			asserts: "every ConfigMap of the cluster deleted: the operator recreates them without restarting any pod",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				before := map[string]map[string]types.UID{}
				for _, c := range []string{"pd", "tikv", "tidb"} {
					before[c] = s.podUIDs(c)
				}
				cms := s.env.Kube.CoreV1().ConfigMaps(s.env.Namespace)
				list, err := cms.List(s.env.Ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=basic"})
				if err != nil || len(list.Items) == 0 {
					t.Fatalf("ConfigMaps of the cluster: %d, %v", len(list.Items), err)
				}
				for _, cm := range list.Items {
					if err := cms.Delete(s.env.Ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				for _, cm := range list.Items {
					s.waitRecreated("ConfigMap "+cm.Name+" recreated", cm.UID, func(ctx context.Context) (types.UID, error) {
						o, err := cms.Get(ctx, cm.Name, metav1.GetOptions{})
						if err != nil {
							return "", err
						}
						return o.UID, nil
					})
				}
				s.waitConverged("converged after the ConfigMaps came back")
				for c, uids := range before {
					for pod, uid := range s.podUIDs(c) {
						if uids[pod] != uid {
							t.Errorf("%s was restarted after its ConfigMap was recreated", pod)
						}
					}
				}
			}},
		{name: "edit/delete-discovery",
			asserts: "the discovery Deployment deleted: the operator recreates it",
			run: func(t *testing.T) {
				s := start(t, scOptions{})
				deps := s.env.Kube.AppsV1().Deployments(s.env.Namespace)
				old, err := deps.Get(s.env.Ctx, "basic-discovery", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := deps.Delete(s.env.Ctx, old.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				s.waitRecreated("discovery Deployment recreated", old.UID, func(ctx context.Context) (types.UID, error) {
					o, err := deps.Get(ctx, old.Name, metav1.GetOptions{})
					if err != nil {
						return "", err
					}
					return o.UID, nil
				})
				s.waitConverged("converged after the discovery came back")
			}},
	}
}
