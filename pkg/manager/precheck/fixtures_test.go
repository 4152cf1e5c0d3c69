package precheck

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Hand-built valid objects, shaped like what the operator writes with most
// pass-through fields set. Each call returns a fresh copy tests may mutate.

var tikvLabels = map[string]string{
	"app.kubernetes.io/name":      "tidb-cluster",
	"app.kubernetes.io/instance":  "basic",
	"app.kubernetes.io/component": "tikv",
}

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: copyMap(tikvLabels),
		Annotations: map[string]string{"example.com/owner": "dba", "note": "free text: anything goes"}}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func validStatefulSet() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: objectMeta("basic-tikv"),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](3),
			Selector:            &metav1.LabelSelector{MatchLabels: copyMap(tikvLabels)},
			ServiceName:         "basic-tikv-peer",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](3)},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: copyMap(tikvLabels),
					Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "20180"}},
				Spec: validPodSpec(),
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "tikv"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To("local-storage"),
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("100Gi")}},
				},
			}},
		},
	}
}

func validPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		InitContainers: []corev1.Container{{
			Name: "init", Image: "busybox:1.36", Command: []string{"sh", "-c", "true"},
			VolumeMounts: []corev1.VolumeMount{{Name: "tikv", MountPath: "/var/lib/tikv"}},
		}},
		Containers:                    []corev1.Container{validContainer(), sidecar()},
		Volumes:                       validVolumes(),
		NodeSelector:                  map[string]string{"kubernetes.io/os": "linux", "disktype": "ssd"},
		Tolerations:                   validTolerations(),
		Affinity:                      validAffinity(),
		TopologySpreadConstraints:     validSpread(),
		SchedulerName:                 "tidb-scheduler",
		PriorityClassName:             "high-priority",
		ServiceAccountName:            "basic-tikv",
		DNSPolicy:                     corev1.DNSClusterFirst,
		DNSConfig:                     &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.10"}, Searches: []string{"ns.svc.cluster.local", "example.com."}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		ImagePullSecrets:              []corev1.LocalObjectReference{{Name: "registry"}},
		HostAliases:                   []corev1.HostAlias{{IP: "10.1.1.1", Hostnames: []string{"pd.example.com"}}},
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000),
			FSGroup: ptr.To[int64](2000), SupplementalGroups: []int64{3000},
			Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "32768"}}},
	}
}

func validContainer() corev1.Container {
	return corev1.Container{
		Name: "tikv", Image: "pingcap/tikv:v8.5.0", ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"/bin/sh", "/usr/local/bin/tikv_start_script.sh"},
		Ports: []corev1.ContainerPort{
			{Name: "server", ContainerPort: 20160, Protocol: corev1.ProtocolTCP},
			{Name: "status", ContainerPort: 20180},
		},
		Env: []corev1.EnvVar{
			{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "CLUSTER_NAME", Value: "basic"},
			{Name: "TZ", Value: "UTC"},
			{Name: "1st.weird-but-relaxed", Value: "ok"},
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "basic-secret"}, Key: "password"}}},
		},
		EnvFrom: []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "extra-env"}}}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi"), "example.com/gpu": resource.MustParse("1")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi"), "example.com/gpu": resource.MustParse("1")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "tikv", MountPath: "/var/lib/tikv"},
			{Name: "config", MountPath: "/etc/tikv", ReadOnly: true},
			{Name: "startup-script", MountPath: "/usr/local/bin", SubPath: "scripts/start"},
			{Name: "annotations", MountPath: "/etc/podinfo"},
		},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("server")}},
			InitialDelaySeconds: 10},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/status", Port: intstr.FromInt32(20180)}},
			SuccessThreshold: 1},
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
		SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), AllowPrivilegeEscalation: ptr.To(false),
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}},
	}
}

func sidecar() corev1.Container {
	return corev1.Container{Name: "slowlog", Image: "busybox:1.36",
		VolumeMounts: []corev1.VolumeMount{{Name: "tikv", MountPath: "/var/log/tikv", SubPathExpr: "$(POD_NAME)"}}}
}

func validVolumes() []corev1.Volume {
	return []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "basic-tikv-364be9a"},
			Items:                []corev1.KeyToPath{{Key: "config-file", Path: "tikv.toml"}}}}},
		{Name: "startup-script", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "basic-tikv-364be9a"},
			Items:                []corev1.KeyToPath{{Key: "startup-script", Path: "scripts/start/tikv_start_script.sh"}}}}},
		{Name: "annotations", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}}}}}},
		{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "basic-tikv-cluster-secret", DefaultMode: ptr.To[int32](0o420)}}},
		{Name: "scratch"}, // no source: the API server defaults an emptyDir
	}
}

func validTolerations() []corev1.Toleration {
	return []corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "tikv", Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)},
		{Operator: corev1.TolerationOpExists},
	}
}

func validAffinity() *corev1.Affinity {
	return &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}},
			}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: corev1.NodeSelectorTerm{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cpu-count", Operator: corev1.NodeSelectorOpGt, Values: []string{"8"}}}}}},
		},
		PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: copyMap(tikvLabels)}, TopologyKey: "kubernetes.io/hostname"}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app.kubernetes.io/component", Operator: metav1.LabelSelectorOpIn, Values: []string{"pd", "tikv"}}}},
				TopologyKey:   "topology.kubernetes.io/zone", Namespaces: []string{"ns"}}}},
		},
	}
}

func validSpread() []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule,
			MinDomains: ptr.To[int32](3), LabelSelector: &metav1.LabelSelector{MatchLabels: copyMap(tikvLabels)}},
		{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway,
			NodeTaintsPolicy: ptr.To(corev1.NodeInclusionPolicyHonor), MatchLabelKeys: []string{"pod-template-hash"}},
	}
}

func headlessService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta("basic-tikv-peer"),
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
			Ports:    []corev1.ServicePort{{Name: "peer", Port: 20160, TargetPort: intstr.FromInt32(20160)}},
			Selector: copyMap(tikvLabels)},
	}
}

func clusterIPService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta("basic-tidb"),
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.12",
			Ports: []corev1.ServicePort{
				{Name: "mysql-client", Port: 4000, TargetPort: intstr.FromString("mysql"), Protocol: corev1.ProtocolTCP},
				{Name: "status", Port: 10080, TargetPort: intstr.FromInt32(10080)},
			},
			Selector: copyMap(tikvLabels), SessionAffinity: corev1.ServiceAffinityClientIP,
			InternalTrafficPolicy: ptr.To(corev1.ServiceInternalTrafficPolicyLocal)},
	}
}

func loadBalancerService() *corev1.Service {
	s := clusterIPService()
	s.Spec.Type = corev1.ServiceTypeLoadBalancer
	s.Spec.Ports[0].NodePort = 30400
	s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	s.Spec.HealthCheckNodePort = 31000
	s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8", " 192.168.0.0/16 "}
	s.Spec.LoadBalancerClass = ptr.To("example.com/internal")
	return s
}

func validDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: objectMeta("basic-discovery"),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: copyMap(tikvLabels)},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxSurge: ptr.To(intstr.FromInt32(1))}},
			ProgressDeadlineSeconds: ptr.To[int32](600),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: copyMap(tikvLabels)},
				Spec: corev1.PodSpec{ServiceAccountName: "basic-discovery", Containers: []corev1.Container{{
					Name: "discovery", Image: "pingcap/tidb-operator:v1.6.0", Command: []string{"/usr/local/bin/tidb-discovery"},
					Env:   []corev1.EnvVar{{Name: "MY_POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
					Ports: []corev1.ContainerPort{{Name: "discovery", ContainerPort: 10261}, {Name: "proxy", ContainerPort: 10262}},
				}}},
			},
		},
	}
}

func validConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: objectMeta("basic-tikv-364be9a"),
		Data:       map[string]string{"config-file": "[storage]\nreserve-space = '0MB'\n", "startup-script": "#!/bin/sh\n"},
		BinaryData: map[string][]byte{"blob.bin": {0, 1, 2}}}
}

func validServiceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: objectMeta("basic-discovery")}
}

func validRole() *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: objectMeta("basic-discovery"), Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"pingcap.com"}, Resources: []string{"tidbclusters"}, ResourceNames: []string{"basic"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}},
	}}
}

func validRoleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: objectMeta("basic-discovery"),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "basic-discovery"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.ServiceAccountKind, Name: "basic-discovery"},
			{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:ns"},
		}}
}

func validPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: objectMeta("basic-tikv-0"), Spec: validDeployment().Spec.Template.Spec}
}
