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
	return metav1.ObjectMeta{Name: names.DiscoveryName(tc.Name), Namespace: tc.Namespace,
		Labels: component.Labels(tc, names.Discovery)}
}

// newServiceAccount returns <tc>-discovery.
func newServiceAccount(tc *v1alpha1.TidbCluster) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: meta(tc)}
}

// newRole lets discovery read its own TidbCluster and the Secrets it needs for TLS.
func newRole(tc *v1alpha1.TidbCluster) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: meta(tc),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.GroupName}, Resources: []string{"tidbclusters"},
				ResourceNames: []string{tc.Name}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
}

// newRoleBinding binds the Role to the ServiceAccount.
func newRoleBinding(tc *v1alpha1.TidbCluster) *rbacv1.RoleBinding {
	name := names.DiscoveryName(tc.Name)
	return &rbacv1.RoleBinding{
		ObjectMeta: meta(tc),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: tc.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
	}
}

// newService exposes the discovery API and the PD dashboard proxy.
func newService(tc *v1alpha1.TidbCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta(tc),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Ports:    []corev1.ServicePort{component.Port("discovery", Port), component.Port("proxy", ProxyPort)},
			Selector: component.Labels(tc, names.Discovery),
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

// newDeployment runs one discovery pod with the operator's discovery image.
func newDeployment(tc *v1alpha1.TidbCluster, image string) *appsv1.Deployment {
	acc := defaulting.NewComponentAccessor(tc, defaulting.ComponentDiscovery)
	podLabels := component.Labels(tc, names.Discovery)
	tz := tc.Spec.Timezone
	if tz == "" {
		tz = "UTC"
	}
	c := corev1.Container{
		Name:            container,
		Image:           image,
		ImagePullPolicy: acc.ImagePullPolicy(),
		Command:         []string{binary},
		Ports: []corev1.ContainerPort{
			{Name: "discovery", ContainerPort: Port, Protocol: corev1.ProtocolTCP},
			{Name: "proxy", ContainerPort: ProxyPort, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			{Name: "MY_POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "TZ", Value: tz},
			{Name: "TC_NAME", Value: tc.Name},
		},
		Resources:       component.ContainerResources(tc.Spec.Discovery.ResourceRequirements),
		SecurityContext: acc.SecurityContext(),
		LivenessProbe:   tcpProbe(tc.Spec.Discovery.LivenessProbe),
		ReadinessProbe:  tcpProbe(tc.Spec.Discovery.ReadinessProbe),
	}
	var vols []corev1.Volume
	if tls := tc.Spec.TLSCluster; tls != nil && tls.Enabled {
		c.Env = append(c.Env, corev1.EnvVar{Name: "TC_TLS_ENABLED", Value: "true"})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: pdTLSVolume, MountPath: pdTLSDir, ReadOnly: true})
		vols = append(vols, component.TLSVolume(pdTLSVolume, names.ClusterSecret(tc.Name, names.PD)))
		if tls.EnableDiscoveryMTLS {
			c.Env = append(c.Env, corev1.EnvVar{Name: "DISCOVERY_MTLS_ENABLED", Value: "true"})
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: discTLSVolume, MountPath: discoveryTLS, ReadOnly: true})
			vols = append(vols, component.TLSVolume(discTLSVolume, names.ClusterSecret(tc.Name, names.Discovery)))
		}
	}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: meta(tc),
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: podLabels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: acc.Annotations()},
				Spec: corev1.PodSpec{
					ServiceAccountName: names.DiscoveryName(tc.Name),
					Containers:         []corev1.Container{c},
					Volumes:            vols,
					Affinity:           acc.Affinity(),
					NodeSelector:       acc.NodeSelector(),
					Tolerations:        acc.Tolerations(),
					PriorityClassName:  acc.PriorityClassName(),
					ImagePullSecrets:   acc.ImagePullSecrets(),
					SecurityContext:    acc.PodSecurityContext(),
				},
			},
		},
	}
	setServiceAccountToken(tc, &d.Spec.Template.Spec)
	return d
}

// Objects returns every object the manager applies for tc, in apply order,
// as built (before owner references and the applied hash are added).
func Objects(tc *v1alpha1.TidbCluster, image string) []metav1.Object {
	return []metav1.Object{newServiceAccount(tc), newRole(tc), newRoleBinding(tc), newService(tc), newDeployment(tc, image)}
}
