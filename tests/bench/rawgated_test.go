//go:build bench

package main

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetidb/tidb-operator/pkg/label"
)

func obj(kind, name, component string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetKind(kind)
	u.SetName(name)
	u.SetLabels(map[string]string{label.ComponentLabelKey: component})
	return u
}

func TestTheGatedReplayKeepsTheTiDBOperatorsOrder(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj("Role", "db-discovery", "discovery"),
		obj("StatefulSet", "db-pd", "pd"),
		obj("StatefulSet", "db-tikv", "tikv"),
		obj("ConfigMap", "db-tiflash-1", "tiflash"),
		obj("StatefulSet", "db-pump", "pump"),
		obj("Service", "db-tidb", "tidb"),
		obj("StatefulSet", "db-ticdc", "ticdc"),
	}
	want := []int{stagePD, stagePD, stageStores, stageStores, stageStores, stageSQL, stageSQL}
	for i, o := range objs {
		if got := stageOf(o); got != want[i] {
			t.Errorf("%s %s: stage %d, want %d", o.GetKind(), o.GetName(), got, want[i])
		}
	}
	g := gatesOf(objs)
	if len(g[stagePD]) != 0 {
		t.Errorf("the first stage waits for %v, want nothing", g[stagePD])
	}
	if len(g[stageStores]) != 1 || g[stageStores][0] != "db-pd" {
		t.Errorf("the stores wait for %v, want [db-pd]", g[stageStores])
	}
	if len(g[stageSQL]) != 2 || g[stageSQL][0] != "db-tikv" || g[stageSQL][1] != "db-pump" {
		t.Errorf("TiDB and TiCDC wait for %v, want [db-tikv db-pump]", g[stageSQL])
	}
}
