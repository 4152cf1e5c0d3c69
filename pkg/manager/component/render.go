package component

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Desired returns the objects the skeleton creates for comp on a new
// cluster — Services, the ConfigMap (named as the strategy names it) and the
// StatefulSet with its replicas and partition — using the same builders, for
// offline review. tc must be defaulted and valid.
func Desired(tc *v1alpha1.TidbCluster, comp Component[*v1alpha1.TidbCluster]) ([]metav1.Object, error) {
	return desiredObjects(TidbClusterSettings{}, tc, comp)
}

// desiredObjects is Desired for any owner kind, whose fields settings reads.
func desiredObjects[O Owner](settings OwnerSettings[O], tc O, comp Component[O]) ([]metav1.Object, error) {
	if !comp.Enabled(tc) {
		return nil, nil
	}
	var out []metav1.Object
	for _, s := range comp.Services(tc) {
		out = append(out, s)
	}
	data, err := comp.ConfigData(tc)
	if err != nil {
		return nil, err
	}
	cmName := ""
	if data != nil {
		cmName = names.Member(tc.GetName(), comp.Name())
		if configStrategy(settings, tc, comp) == v1alpha1.ConfigUpdateStrategyRollingUpdate {
			cmName = names.ConfigMapWithHash(tc.GetName(), comp.Name(), dataHash(data))
		}
		out = append(out, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: cmName, Namespace: tc.GetNamespace(), Labels: settings.Labels(tc, comp.Name())},
			Data:       data,
		})
	}
	sts, err := comp.StatefulSet(tc, cmName)
	if err != nil {
		return nil, err
	}
	setReplicas(sts, comp.Replicas(tc), partitioned(comp))
	return append(out, sts), nil
}

// Desired returns the objects the skeleton would write for tc (render).
func (m *Manager[O]) Desired(tc O) ([]metav1.Object, error) {
	return desiredObjects(m.owner, tc, m.comp)
}
