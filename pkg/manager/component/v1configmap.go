package component

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// foreignConfigMap reports whether the ConfigMap name was written by
// another operator (the TiDB Operator v1): it carries no applied hash of
// ours. Such a ConfigMap that means the same as ours is kept as it is.
func (m *Manager[O]) foreignConfigMap(namespace, name string) bool {
	cm, err := m.cms.ConfigMaps(namespace).Get(name)
	return err == nil && cm.Annotations[apply.AnnAppliedHash] == ""
}

// collectForeignConfigMaps deletes the component's ConfigMaps another
// operator wrote (no applied hash of ours, controlled by the cluster, named
// <tc>-<component>…) once nothing mounts them: the live StatefulSet mounts
// the ConfigMap this sync chose and is at rest (observed, every replica
// updated and Ready, one revision).
// Our own earlier ConfigMaps are left to the cluster's deletion, as before.
func (m *Manager[O]) collectForeignConfigMaps(ctx context.Context, st *syncState[O]) error {
	tc, live := st.tc, st.live
	// At rest, not merely "not upgrading": a scale-out writes the new
	// template and replicas in one write, and until the StatefulSet observes
	// it the status still looks settled while new pods would be created at
	// the old revision, mounting the old ConfigMap.
	if live == nil || live.Spec.Replicas == nil || st.configMap == "" || configMapInUse(live) != st.configMap ||
		!atRest(live, *live.Spec.Replicas) {
		return nil
	}
	list, err := m.cms.ConfigMaps(tc.GetNamespace()).List(labels.SelectorFromSet(m.owner.Labels(tc, m.comp.Name())))
	if err != nil {
		return fmt.Errorf("list ConfigMaps: %w", err)
	}
	prefix := names.Member(tc.GetName(), m.comp.Name())
	for _, cm := range list {
		ref := metav1.GetControllerOf(cm)
		if cm.Name == st.configMap || !strings.HasPrefix(cm.Name, prefix) || cm.Annotations[apply.AnnAppliedHash] != "" ||
			ref == nil || ref.UID != tc.GetUID() || cm.DeletionTimestamp != nil {
			continue
		}
		if err := m.writer.DeleteConfigMap(ctx, tc, cm.Name, apply.UIDIs(cm.UID), "no pod mounts it since the takeover"); err != nil {
			return err
		}
	}
	return nil
}
