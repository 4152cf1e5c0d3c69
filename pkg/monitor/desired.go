package monitor

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Desired is every object of one TidbMonitor. The controller writes them
// in the order of Objects, and `render` prints them in that order.
type Desired struct {
	ServiceAccount *corev1.ServiceAccount
	Role           *rbacv1.Role
	RoleBinding    *rbacv1.RoleBinding
	// ConfigMaps are <tm>-monitor, then <tm>-monitor-grafana with Grafana.
	ConfigMaps   []*corev1.ConfigMap
	Services     []*corev1.Service
	StatefulSets []*appsv1.StatefulSet
}

// NewDesired builds the objects of tm scraping targets. It is pure and
// errors only when a configuration cannot be encoded or spec.storage is
// not a quantity; retrying cannot fix either.
func NewDesired(tm *v1alpha1.TidbMonitor, targets []Target) (*Desired, error) {
	cm, err := NewConfigMap(tm, targets)
	if err != nil {
		return nil, err
	}
	sets, err := NewStatefulSets(tm, targets)
	if err != nil {
		return nil, err
	}
	d := &Desired{
		ServiceAccount: NewServiceAccount(tm),
		Role:           NewRole(tm),
		RoleBinding:    NewRoleBinding(tm),
		ConfigMaps:     []*corev1.ConfigMap{cm},
		Services:       NewServices(tm),
		StatefulSets:   sets,
	}
	if tm.Spec.Grafana != nil {
		d.ConfigMaps = append(d.ConfigMaps, NewGrafanaConfigMap(tm))
	}
	return d, nil
}

// Objects lists d in dependency order: identity, then configuration, then
// the Services, then the StatefulSets whose pods use them all.
func (d *Desired) Objects() []metav1.Object {
	out := []metav1.Object{d.ServiceAccount, d.Role, d.RoleBinding}
	for _, cm := range d.ConfigMaps {
		out = append(out, cm)
	}
	for _, svc := range d.Services {
		out = append(out, svc)
	}
	for _, sts := range d.StatefulSets {
		out = append(out, sts)
	}
	return out
}
