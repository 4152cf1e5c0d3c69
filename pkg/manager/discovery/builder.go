package discovery

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Discovery's ports and paths.
const (
	Port          = 10261
	ProxyPort     = 10262
	container     = "discovery"
	pdTLSDir      = "/var/lib/pd-tls"
	discoveryTLS  = "/var/lib/discovery-tls"
	binary        = "/usr/local/bin/tidb-discovery"
	pdTLSVolume   = "pd-tls"
	discTLSVolume = "discovery-tls"
)

func meta(tc *v1alpha1.TidbCluster) metav1.ObjectMeta {
	return objectMeta(tc, names.DiscoveryName(tc.Name), component.Labels(tc, names.Discovery))
}

// objectMeta is the metadata of every discovery object of owner: name,
// owner's namespace and labels (the pod labels, also the selector).
func objectMeta(owner metav1.Object, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: owner.GetNamespace(), Labels: labels}
}

// newServiceAccount returns <tc>-discovery.
func newServiceAccount(tc *v1alpha1.TidbCluster) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: meta(tc)}
}

// newRole lets discovery read its own TidbCluster and the Secrets it needs for TLS.
func newRole(tc *v1alpha1.TidbCluster) *rbacv1.Role {
	return newRoleFor(meta(tc), "tidbclusters", tc.Name)
}

// newRoleFor lets discovery get the one cluster clusterName of resource
// (tidbclusters or dmclusters) and read Secrets.
func newRoleFor(m metav1.ObjectMeta, resource, clusterName string) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: m,
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{resource},
				ResourceNames: []string{clusterName}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
}

// newRoleBinding binds the Role to the ServiceAccount.
func newRoleBinding(tc *v1alpha1.TidbCluster) *rbacv1.RoleBinding {
	return newRoleBindingFor(meta(tc))
}

// newRoleBindingFor binds the Role named m.Name to the ServiceAccount of
// the same name.
func newRoleBindingFor(m metav1.ObjectMeta) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: m,
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: m.Name, Namespace: m.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: m.Name},
	}
}

// newService exposes the discovery API and the PD dashboard proxy.
func newService(tc *v1alpha1.TidbCluster) *corev1.Service {
	return newServiceFor(meta(tc))
}

// newServiceFor exposes ports 10261 and 10262 of the pods labelled m.Labels.
func newServiceFor(m metav1.ObjectMeta) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Ports:    []corev1.ServicePort{component.Port("discovery", Port), component.Port("proxy", ProxyPort)},
			Selector: m.Labels,
		},
	}
}

// tcpProbe is the TCP probe of the discovery port that
// spec.discovery.livenessProbe or readinessProbe asks for, with its delay
// and period, as the TiDB Operator builds it; nil when unset. The type is
// not read: discovery serves no status page a command could fetch.
func tcpProbe(p *v1alpha1.Probe) *corev1.Probe {
	if p == nil {
		return nil
	}
	probe := component.TCPReadiness(Port, 0)
	if p.InitialDelaySeconds != nil {
		probe.InitialDelaySeconds = *p.InitialDelaySeconds
	}
	if p.PeriodSeconds != nil {
		probe.PeriodSeconds = *p.PeriodSeconds
	}
	return probe
}

// deploymentParams is what a discovery Deployment is built from, for either
// owner kind.
type deploymentParams struct {
	meta                metav1.ObjectMeta // also the pod labels and selector
	acc                 defaulting.ComponentAccessor
	image, timezone     string
	clusterName         string // TC_NAME
	resources           v1alpha1.ResourceRequirements
	liveness, readiness *v1alpha1.Probe
}

// newDeployment runs one discovery pod with the operator's discovery image.
func newDeployment(tc *v1alpha1.TidbCluster, image string) *appsv1.Deployment {
	acc := defaulting.NewComponentAccessor(tc, defaulting.ComponentDiscovery)
	d := newDeploymentFor(deploymentParams{
		meta: meta(tc), acc: acc, image: image, timezone: tc.Spec.Timezone, clusterName: tc.Name,
		resources: tc.Spec.Discovery.ResourceRequirements,
		liveness:  tc.Spec.Discovery.LivenessProbe, readiness: tc.Spec.Discovery.ReadinessProbe,
	})
	pod := &d.Spec.Template.Spec
	c := &pod.Containers[0]
	if tls := tc.Spec.TLSCluster; tls != nil && tls.Enabled {
		c.Env = append(c.Env, corev1.EnvVar{Name: "TC_TLS_ENABLED", Value: "true"})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: pdTLSVolume, MountPath: pdTLSDir, ReadOnly: true})
		pod.Volumes = append(pod.Volumes, component.TLSVolume(pdTLSVolume, names.ClusterSecret(tc.Name, names.PD)))
		if tls.EnableDiscoveryMTLS {
			c.Env = append(c.Env, corev1.EnvVar{Name: "DISCOVERY_MTLS_ENABLED", Value: "true"})
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: discTLSVolume, MountPath: discoveryTLS, ReadOnly: true})
			pod.Volumes = append(pod.Volumes, component.TLSVolume(discTLSVolume, names.ClusterSecret(tc.Name, names.Discovery)))
		}
	}
	setServiceAccountToken(acc, pod)
	return d
}

// newDeploymentFor builds the one-replica Recreate Deployment of p: the
// discovery container with its ports and environment (MY_POD_NAMESPACE, TZ
// defaulting to UTC, TC_NAME) and the pod fields of the accessor.
func newDeploymentFor(p deploymentParams) *appsv1.Deployment {
	tz := p.timezone
	if tz == "" {
		tz = "UTC"
	}
	c := corev1.Container{
		Name:            container,
		Image:           p.image,
		ImagePullPolicy: p.acc.ImagePullPolicy(),
		Command:         []string{binary},
		Ports: []corev1.ContainerPort{
			{Name: "discovery", ContainerPort: Port, Protocol: corev1.ProtocolTCP},
			{Name: "proxy", ContainerPort: ProxyPort, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			{Name: "MY_POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "TZ", Value: tz},
			{Name: "TC_NAME", Value: p.clusterName},
		},
		Resources:       component.ContainerResources(p.resources),
		SecurityContext: p.acc.SecurityContext(),
		LivenessProbe:   tcpProbe(p.liveness),
		ReadinessProbe:  tcpProbe(p.readiness),
	}
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: p.meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: p.meta.Labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: p.meta.Labels, Annotations: p.acc.Annotations()},
				Spec: corev1.PodSpec{
					ServiceAccountName: p.meta.Name,
					Containers:         []corev1.Container{c},
					Affinity:           p.acc.Affinity(),
					NodeSelector:       p.acc.NodeSelector(),
					Tolerations:        p.acc.Tolerations(),
					PriorityClassName:  p.acc.PriorityClassName(),
					ImagePullSecrets:   p.acc.ImagePullSecrets(),
					SecurityContext:    p.acc.PodSecurityContext(),
				},
			},
		},
	}
}

// Objects returns every object the manager applies for tc, in apply order,
// as built (before owner references and the applied hash are added).
func Objects(tc *v1alpha1.TidbCluster, image string) []metav1.Object {
	return []metav1.Object{newServiceAccount(tc), newRole(tc), newRoleBinding(tc), newService(tc), newDeployment(tc, image)}
}
