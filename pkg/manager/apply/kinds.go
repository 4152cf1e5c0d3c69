package apply

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// Applier applies each kind an Owner (a TidbCluster, a TidbMonitor, …) owns and does the operator's
// other writes (deletes and annotation patches, writes.go). Reads come from
// the informer caches only, so a converged sync reads nothing from the API.
type Applier struct {
	kube                 kubernetes.Interface
	recorder             record.EventRecorder
	serviceLister        corelisters.ServiceLister
	configMapLister      corelisters.ConfigMapLister
	statefulSetLister    appslisters.StatefulSetLister
	deploymentLister     appslisters.DeploymentLister
	serviceAccountLister corelisters.ServiceAccountLister
	roleLister           rbaclisters.RoleLister
	roleBindingLister    rbaclisters.RoleBindingLister
	pvLister             corelisters.PersistentVolumeLister
	// clusters writes TidbCluster metadata (tidbcluster.go); nil until WithClusters.
	clusters versioned.Interface
	// recent are this Applier's creates and PV patches its caches have not
	// shown yet.
	recent recentWrites
}

// Caches are the listers an Applier reads live objects from; a nil lister
// is allowed for a kind that is never applied.
type Caches struct {
	Services        corelisters.ServiceLister
	ConfigMaps      corelisters.ConfigMapLister
	StatefulSets    appslisters.StatefulSetLister
	Deployments     appslisters.DeploymentLister
	ServiceAccounts corelisters.ServiceAccountLister
	Roles           rbaclisters.RoleLister
	RoleBindings    rbaclisters.RoleBindingLister
	// PersistentVolumes, when set, lets PatchPV see that its cache has not
	// caught up with a patch it sent (fields already sent are not sent again).
	PersistentVolumes corelisters.PersistentVolumeLister
}

// NewApplier returns the Applier that writes with kube, records events
// with recorder (nil: none) and reads live objects from caches.
func NewApplier(kube kubernetes.Interface, recorder record.EventRecorder, caches Caches) *Applier {
	return &Applier{
		kube:                 kube,
		recorder:             recorder,
		serviceLister:        caches.Services,
		configMapLister:      caches.ConfigMaps,
		statefulSetLister:    caches.StatefulSets,
		deploymentLister:     caches.Deployments,
		serviceAccountLister: caches.ServiceAccounts,
		roleLister:           caches.Roles,
		roleBindingLister:    caches.RoleBindings,
		pvLister:             caches.PersistentVolumes,
	}
}

// Service creates or updates desired. It keeps the live ClusterIP(s) and the
// NodePorts the API server allocated for ports that do not ask for one.
func (a *Applier) Service(ctx context.Context, owner Owner, desired *corev1.Service) (*corev1.Service, error) {
	c := a.kube.CoreV1().Services(desired.Namespace)
	return apply(ctx, a, owner, desired, ops[*corev1.Service]{
		kind:     "Service",
		metaOnly: true,
		get:      func(ns, name string) (*corev1.Service, error) { return a.serviceLister.Services(ns).Get(name) },
		create: func(ctx context.Context, o *corev1.Service) (*corev1.Service, error) {
			return c.Create(ctx, o, metav1.CreateOptions{})
		},
		fetch: func(ctx context.Context, _, name string) (*corev1.Service, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *corev1.Service) (*corev1.Service, error) {
			return c.Update(ctx, o, metav1.UpdateOptions{})
		},
		owned: func(d *corev1.Service) any {
			return struct {
				M ownedMeta
				S corev1.ServiceSpec
			}{metaOf(d), d.Spec}
		},
		merge: mergeService,
	})
}

func mergeService(live, desired *corev1.Service) *corev1.Service {
	spec := desired.Spec.DeepCopy()
	if spec.ClusterIP != corev1.ClusterIPNone {
		spec.ClusterIP, spec.ClusterIPs = live.Spec.ClusterIP, live.Spec.ClusterIPs
	}
	spec.IPFamilies, spec.IPFamilyPolicy = live.Spec.IPFamilies, live.Spec.IPFamilyPolicy
	for i := range spec.Ports {
		if spec.Ports[i].NodePort != 0 {
			continue
		}
		for _, lp := range live.Spec.Ports {
			if lp.Name == spec.Ports[i].Name && lp.Port == spec.Ports[i].Port {
				spec.Ports[i].NodePort = lp.NodePort
			}
		}
	}
	if spec.Type == corev1.ServiceTypeClusterIP {
		for i := range spec.Ports {
			spec.Ports[i].NodePort = 0
		}
	}
	if spec.HealthCheckNodePort == 0 {
		spec.HealthCheckNodePort = live.Spec.HealthCheckNodePort
	}
	live.Spec = *spec
	return live
}

// ConfigMap creates or updates desired; its data is wholly owned.
func (a *Applier) ConfigMap(ctx context.Context, owner Owner, desired *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	c := a.kube.CoreV1().ConfigMaps(desired.Namespace)
	return apply(ctx, a, owner, desired, ops[*corev1.ConfigMap]{
		kind: "ConfigMap",
		get:  func(ns, name string) (*corev1.ConfigMap, error) { return a.configMapLister.ConfigMaps(ns).Get(name) },
		create: func(ctx context.Context, o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return c.Create(ctx, o, metav1.CreateOptions{})
		},
		fetch: func(ctx context.Context, _, name string) (*corev1.ConfigMap, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return c.Update(ctx, o, metav1.UpdateOptions{})
		},
		owned: ownedConfigMap,
		merge: func(live, d *corev1.ConfigMap) *corev1.ConfigMap { live.Data = d.Data; return live },
	})
}

func ownedConfigMap(d *corev1.ConfigMap) any {
	return struct {
		M ownedMeta
		D map[string]string
	}{metaOf(d), d.Data}
}

// ConfigMapHash returns the hash ConfigMap records on the object it writes
// for desired (AnnAppliedHash): equal hashes mean the same labels,
// annotations and data. It errors only when desired cannot be marshalled.
func ConfigMapHash(desired *corev1.ConfigMap) (string, error) {
	return Hash(ownedConfigMap(desired))
}

// StatefulSet creates or updates desired. Updates send replicas, update
// strategy and pod template only (the live template is kept when it means
// the same as desired's and was not applied by us: a takeover, see
// adoptTemplate): selector, service name, pod management
// policy and volume claim templates are immutable and kept as they are.
// Replicas and partition changed by someone else are put back.
func (a *Applier) StatefulSet(ctx context.Context, owner Owner, desired *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
	c := a.kube.AppsV1().StatefulSets(desired.Namespace)
	return apply(ctx, a, owner, desired, ops[*appsv1.StatefulSet]{
		kind: "StatefulSet",
		get: func(ns, name string) (*appsv1.StatefulSet, error) {
			return a.statefulSetLister.StatefulSets(ns).Get(name)
		},
		create: func(ctx context.Context, o *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
			return c.Create(ctx, o, metav1.CreateOptions{})
		},
		fetch: func(ctx context.Context, _, name string) (*appsv1.StatefulSet, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *appsv1.StatefulSet) (*appsv1.StatefulSet, error) {
			return c.Update(ctx, o, metav1.UpdateOptions{})
		},
		owned: func(d *appsv1.StatefulSet) any {
			return struct {
				M        ownedMeta
				Replicas *int32
				Strategy appsv1.StatefulSetUpdateStrategy
				Template corev1.PodTemplateSpec
			}{metaOf(d), d.Spec.Replicas, d.Spec.UpdateStrategy, d.Spec.Template}
		},
		merge: func(live, d *appsv1.StatefulSet) *appsv1.StatefulSet {
			live.Spec.Replicas = d.Spec.Replicas
			live.Spec.UpdateStrategy = d.Spec.UpdateStrategy
			if d.Annotations[AnnAdoptedTemplate] == "" {
				live.Spec.Template = d.Spec.Template
			}
			return live
		},
		adopt: func(live, d *appsv1.StatefulSet, whole func() (*appsv1.StatefulSet, error)) error {
			return adoptTemplate(live, d, whole, func(o *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &o.Spec.Template }, false)
		},
		drifted: func(live, d *appsv1.StatefulSet) bool {
			return !equality.Semantic.DeepEqual(live.Spec.Replicas, d.Spec.Replicas) ||
				!equality.Semantic.DeepEqual(partition(live), partition(d))
		},
	})
}

func partition(s *appsv1.StatefulSet) *int32 {
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		return ru.Partition
	}
	return nil
}

// Deployment creates or updates desired (the discovery Deployment); a live
// template of another operator that means the same is kept (adoptTemplate).
func (a *Applier) Deployment(ctx context.Context, owner Owner, desired *appsv1.Deployment) (*appsv1.Deployment, error) {
	c := a.kube.AppsV1().Deployments(desired.Namespace)
	return apply(ctx, a, owner, desired, ops[*appsv1.Deployment]{
		kind: "Deployment",
		get:  func(ns, name string) (*appsv1.Deployment, error) { return a.deploymentLister.Deployments(ns).Get(name) },
		create: func(ctx context.Context, o *appsv1.Deployment) (*appsv1.Deployment, error) {
			return c.Create(ctx, o, metav1.CreateOptions{})
		},
		fetch: func(ctx context.Context, _, name string) (*appsv1.Deployment, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *appsv1.Deployment) (*appsv1.Deployment, error) {
			return c.Update(ctx, o, metav1.UpdateOptions{})
		},
		owned: func(d *appsv1.Deployment) any {
			return struct {
				M        ownedMeta
				Replicas *int32
				Strategy appsv1.DeploymentStrategy
				Template corev1.PodTemplateSpec
			}{metaOf(d), d.Spec.Replicas, d.Spec.Strategy, d.Spec.Template}
		},
		merge: func(live, d *appsv1.Deployment) *appsv1.Deployment {
			live.Spec.Replicas, live.Spec.Strategy = d.Spec.Replicas, d.Spec.Strategy
			if d.Annotations[AnnAdoptedTemplate] == "" {
				live.Spec.Template = d.Spec.Template
			}
			return live
		},
		// The one Deployment applied is discovery's: its image, the
		// operator's own, serves the same protocol as the TiDB Operator's.
		adopt: func(live, d *appsv1.Deployment, whole func() (*appsv1.Deployment, error)) error {
			return adoptTemplate(live, d, whole, func(o *appsv1.Deployment) *corev1.PodTemplateSpec { return &o.Spec.Template }, true)
		},
		drifted: func(live, d *appsv1.Deployment) bool {
			return !equality.Semantic.DeepEqual(live.Spec.Replicas, d.Spec.Replicas)
		},
	})
}

// ServiceAccount creates desired when missing; labels are kept up to date.
func (a *Applier) ServiceAccount(ctx context.Context, owner Owner, desired *corev1.ServiceAccount) (*corev1.ServiceAccount, error) {
	c := a.kube.CoreV1().ServiceAccounts(desired.Namespace)
	return apply(ctx, a, owner, desired, ops[*corev1.ServiceAccount]{
		kind:     "ServiceAccount",
		metaOnly: true,
		get: func(ns, name string) (*corev1.ServiceAccount, error) {
			return a.serviceAccountLister.ServiceAccounts(ns).Get(name)
		},
		create: func(ctx context.Context, o *corev1.ServiceAccount) (*corev1.ServiceAccount, error) {
			return c.Create(ctx, o, metav1.CreateOptions{})
		},
		fetch: func(ctx context.Context, _, name string) (*corev1.ServiceAccount, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *corev1.ServiceAccount) (*corev1.ServiceAccount, error) {
			return c.Update(ctx, o, metav1.UpdateOptions{})
		},
		owned: func(d *corev1.ServiceAccount) any { return metaOf(d) },
		merge: func(live, _ *corev1.ServiceAccount) *corev1.ServiceAccount { return live },
	})
}

// Role creates or updates desired's rules.
func (a *Applier) Role(ctx context.Context, owner Owner, desired *rbacv1.Role) (*rbacv1.Role, error) {
	c := a.kube.RbacV1().Roles(desired.Namespace)
	return apply(ctx, a, owner, desired, ops[*rbacv1.Role]{
		kind:     "Role",
		metaOnly: true,
		get:      func(ns, name string) (*rbacv1.Role, error) { return a.roleLister.Roles(ns).Get(name) },
		create: func(ctx context.Context, o *rbacv1.Role) (*rbacv1.Role, error) {
			return c.Create(ctx, o, metav1.CreateOptions{})
		},
		fetch: func(ctx context.Context, _, name string) (*rbacv1.Role, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *rbacv1.Role) (*rbacv1.Role, error) {
			return c.Update(ctx, o, metav1.UpdateOptions{})
		},
		owned: func(d *rbacv1.Role) any {
			return struct {
				M ownedMeta
				R []rbacv1.PolicyRule
			}{metaOf(d), d.Rules}
		},
		merge: func(live, d *rbacv1.Role) *rbacv1.Role { live.Rules = d.Rules; return live },
	})
}

// RoleBinding creates or updates desired's subjects (its roleRef is immutable).
func (a *Applier) RoleBinding(ctx context.Context, owner Owner, desired *rbacv1.RoleBinding) (*rbacv1.RoleBinding, error) {
	c := a.kube.RbacV1().RoleBindings(desired.Namespace)
	return apply(ctx, a, owner, desired, ops[*rbacv1.RoleBinding]{
		kind:     "RoleBinding",
		metaOnly: true,
		get: func(ns, name string) (*rbacv1.RoleBinding, error) {
			return a.roleBindingLister.RoleBindings(ns).Get(name)
		},
		create: func(ctx context.Context, o *rbacv1.RoleBinding) (*rbacv1.RoleBinding, error) {
			return c.Create(ctx, o, metav1.CreateOptions{})
		},
		fetch: func(ctx context.Context, _, name string) (*rbacv1.RoleBinding, error) {
			return c.Get(ctx, name, metav1.GetOptions{})
		},
		update: func(ctx context.Context, o *rbacv1.RoleBinding) (*rbacv1.RoleBinding, error) {
			return c.Update(ctx, o, metav1.UpdateOptions{})
		},
		owned: func(d *rbacv1.RoleBinding) any {
			return struct {
				M ownedMeta
				S []rbacv1.Subject
				R rbacv1.RoleRef
			}{metaOf(d), d.Subjects, d.RoleRef}
		},
		merge: func(live, d *rbacv1.RoleBinding) *rbacv1.RoleBinding { live.Subjects = d.Subjects; return live },
	})
}
