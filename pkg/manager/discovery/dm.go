package discovery

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// dmInstanceSuffix ends the instance label of a DMCluster's discovery,
// "<dc>-dm", so that its pods never match the selector of the discovery of
// a TidbCluster of the same name.
const dmInstanceSuffix = "-dm"

// DMManager applies the discovery objects of a DMCluster, all named
// <dc>-dm-discovery: the discovery dm-master's start script asks whether to
// bootstrap or join (/new/{b64}/dm).
type DMManager struct {
	applier *apply.Applier
	image   string
}

// NewDM returns a DMManager that writes through env.Writer and runs the
// discovery pod with env.DiscoveryImage.
func NewDM(env *component.Env) *DMManager {
	return &DMManager{applier: env.Writer, image: env.DiscoveryImage}
}

// Name labels the member in logs: "discovery".
func (m *DMManager) Name() string { return "discovery" }

// Sync applies the ServiceAccount, Role, RoleBinding, Service and
// Deployment of dc, owned by dc, in that order: the RBAC objects first so
// that the pod can read the DMCluster. An object already as built is not
// written, so a converged DMCluster costs no write. It runs even when dc is
// paused, as the TiDB Operator's DM discovery does, because discovery only
// answers pods that are starting. It returns the first write error,
// wrapped by the applier; the caller retries the whole sync.
func (m *DMManager) Sync(ctx context.Context, dc *v1alpha1.DMCluster) error {
	if _, err := m.applier.ServiceAccount(ctx, dc, newDMServiceAccount(dc)); err != nil {
		return err
	}
	if _, err := m.applier.Role(ctx, dc, newDMRole(dc)); err != nil {
		return err
	}
	if _, err := m.applier.RoleBinding(ctx, dc, newRoleBindingFor(dmMeta(dc))); err != nil {
		return err
	}
	if _, err := m.applier.Service(ctx, dc, newServiceFor(dmMeta(dc))); err != nil {
		return err
	}
	_, err := m.applier.Deployment(ctx, dc, newDMDeployment(dc, m.image))
	return err
}

// DMObjects returns every object DMManager.Sync applies for dc, in apply
// order, as built (before owner references and the applied hash are added).
func DMObjects(dc *v1alpha1.DMCluster, image string) []metav1.Object {
	return []metav1.Object{newDMServiceAccount(dc), newDMRole(dc), newRoleBindingFor(dmMeta(dc)),
		newServiceFor(dmMeta(dc)), newDMDeployment(dc, image)}
}

// dmLabels are the labels of every DM discovery object and pod:
// name=dm-cluster, managed-by=tidb-operator, instance=<dc>-dm,
// component=discovery.
func dmLabels(dc *v1alpha1.DMCluster) map[string]string {
	return label.Label{label.NameLabelKey: names.DMClusterLabelName, label.ManagedByLabelKey: label.TiDBOperator}.
		Instance(component.Instance(dc) + dmInstanceSuffix).Component(names.Discovery).Labels()
}

func dmMeta(dc *v1alpha1.DMCluster) metav1.ObjectMeta {
	return objectMeta(dc, names.DMDiscovery(dc.Name), dmLabels(dc))
}

// newDMServiceAccount returns <dc>-dm-discovery.
func newDMServiceAccount(dc *v1alpha1.DMCluster) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: dmMeta(dc)}
}

// newDMRole lets discovery get its own DMCluster and read Secrets (the
// dm-master client certificate).
func newDMRole(dc *v1alpha1.DMCluster) *rbacv1.Role {
	return newRoleFor(dmMeta(dc), "dmclusters", dc.Name)
}

// newDMDeployment runs one discovery pod for dc with TC_NAME=<dc>. It has
// no TLS volumes: discovery reads <dc>-dm-client-secret through the API.
func newDMDeployment(dc *v1alpha1.DMCluster, image string) *appsv1.Deployment {
	acc := defaulting.NewDMAccessor(dc, defaulting.ComponentDiscovery)
	d := newDeploymentFor(deploymentParams{
		meta: dmMeta(dc), acc: acc, image: image, timezone: dc.Spec.Timezone, clusterName: dc.Name,
		resources: dc.Spec.Discovery.ResourceRequirements, liveness: dc.Spec.Discovery.LivenessProbe,
	})
	setServiceAccountToken(acc, &d.Spec.Template.Spec)
	return d
}
