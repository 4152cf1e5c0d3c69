// Package discovery is the member manager of the per-cluster discovery
// service that PD's start script asks whether to bootstrap or join. It
// applies a ServiceAccount, Role, RoleBinding, Service and Deployment, all
// named <tc>-discovery (Manager), or <dc>-dm-discovery for a DMCluster,
// whose dm-masters ask it the same way (DMManager); the discovery process
// itself is cmd/discovery.
package discovery

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Manager applies the discovery objects of a cluster.
type Manager struct {
	applier *apply.Applier
	image   string
}

// New returns a manager that writes through env.Writer and runs discovery
// pods with env.DiscoveryImage.
func New(env *component.Env) *Manager {
	return &Manager{applier: env.Writer, image: env.DiscoveryImage}
}

// Desired returns the objects Sync would apply for tc (render).
func (m *Manager) Desired(tc *v1alpha1.TidbCluster) ([]metav1.Object, error) {
	if tc.Spec.PD == nil && !tc.Spec.AcrossK8s {
		return nil, nil
	}
	return Objects(tc, m.image), nil
}

// Name is "discovery".
func (m *Manager) Name() string { return names.Discovery }

// CheckObjects builds the discovery objects and checks them with the API
// server's rules (package precheck), before any write of the sync.
func (m *Manager) CheckObjects(tc *v1alpha1.TidbCluster) field.ErrorList {
	if tc.Spec.PD == nil && !tc.Spec.AcrossK8s {
		return nil
	}
	return precheck.Objects(Objects(tc, m.image))
}

// Sync applies the discovery objects when the cluster has a PD of its own
// (or spans Kubernetes clusters), unless the cluster is paused. The RBAC
// objects come first, so the Deployment's pod can read the cluster.
func (m *Manager) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if (tc.Spec.PD == nil && !tc.Spec.AcrossK8s) || tc.Spec.Paused {
		return nil
	}
	if _, err := m.applier.ServiceAccount(ctx, tc, newServiceAccount(tc)); err != nil {
		return err
	}
	if _, err := m.applier.Role(ctx, tc, newRole(tc)); err != nil {
		return err
	}
	if _, err := m.applier.RoleBinding(ctx, tc, newRoleBinding(tc)); err != nil {
		return err
	}
	if _, err := m.applier.Service(ctx, tc, newService(tc)); err != nil {
		return err
	}
	_, err := m.applier.Deployment(ctx, tc, newDeployment(tc, m.image))
	return err
}
