package precheck

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestTolerationRules(t *testing.T) {
	t.Parallel()
	tol := func(tl corev1.Toleration) metav1.Object {
		return pod(func(p *corev1.PodSpec) { p.Tolerations = []corev1.Toleration{tl} })
	}
	tp := podP + ".tolerations[0]"
	runRuleCases(t, []ruleCase{
		{"Exists with a value", tol(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}),
			[]string{tp + ".value: Invalid value"}},
		{"empty key needs Exists", tol(corev1.Toleration{Operator: corev1.TolerationOpEqual, Value: "v"}),
			[]string{tp + ".operator: Invalid value"}},
		{"empty key and operator", tol(corev1.Toleration{}), []string{tp + ".operator: Invalid value"}},
		{"bad key", tol(corev1.Toleration{Key: "a b", Operator: corev1.TolerationOpExists}),
			[]string{tp + ".key: Invalid value"}},
		{"unknown operator", tol(corev1.Toleration{Key: "k", Operator: "In"}),
			[]string{tp + ".operator: Unsupported value"}},
		{"Equal value not a label value", tol(corev1.Toleration{Key: "k", Value: "a b"}),
			[]string{tp + ".value: Invalid value"}},
		{"Equal with empty value", tol(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual}), nil},
		{"unknown effect", tol(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: "NoRun"}),
			[]string{tp + ".effect: Unsupported value"}},
		{"seconds without NoExecute", tol(corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](5)}),
			[]string{tp + ".effect: Invalid value"}},
	})
}

func TestAffinityAndSpreadRules(t *testing.T) {
	t.Parallel()
	na := podP + ".affinity.nodeAffinity"
	pa := podP + ".affinity.podAntiAffinity"
	tsc := podP + ".topologySpreadConstraints"
	runRuleCases(t, []ruleCase{
		{"node selector", pod(func(p *corev1.PodSpec) { p.NodeSelector["disk type"] = "ssd" }),
			[]string{podP + ".nodeSelector[disk type]: Invalid value"}},
		{"no node selector terms", pod(func(p *corev1.PodSpec) {
			p.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = nil
		}), []string{na + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value"}},
		{"node expression key", pod(func(p *corev1.PodSpec) {
			p.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key = "zone name"
		}), []string{na + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value"}},
		{"In without values", pod(func(p *corev1.PodSpec) {
			p.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values = nil
		}), []string{na + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value"}},
		{"Gt not an integer", pod(func(p *corev1.PodSpec) {
			p.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions[0].Values = []string{"eight"}
		}), []string{na + ".preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]: Invalid value"}},
		{"weight out of range", pod(func(p *corev1.PodSpec) {
			p.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight = 0
		}),
			[]string{na + ".preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value"}},
		{"match fields key", pod(func(p *corev1.PodSpec) {
			p.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields = []corev1.NodeSelectorRequirement{{Key: "spec.nodeName", Operator: "In", Values: []string{"n"}}}
		}), []string{na + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key: Unsupported value"}},
		{"empty topology key", pod(func(p *corev1.PodSpec) {
			p.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey = ""
		}),
			[]string{pa + ".requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value"}},
		{"pod affinity selector value", pod(func(p *corev1.PodSpec) {
			p.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchExpressions[0].Values[0] = "a b"
		}), []string{pa + ".preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchExpressions[0].values[0]: Invalid value"}},
		{"pod affinity namespace", pod(func(p *corev1.PodSpec) {
			p.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.Namespaces = []string{"NS"}
		}), []string{pa + ".preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaces[0]: Invalid value"}},
		{"maxSkew zero", pod(func(p *corev1.PodSpec) { p.TopologySpreadConstraints[0].MaxSkew = 0 }),
			[]string{tsc + "[0].maxSkew: Invalid value"}},
		{"spread topology key", pod(func(p *corev1.PodSpec) { p.TopologySpreadConstraints[1].TopologyKey = "host name" }),
			[]string{tsc + "[1].topologyKey: Invalid value"}},
		{"whenUnsatisfiable required", pod(func(p *corev1.PodSpec) { p.TopologySpreadConstraints[1].WhenUnsatisfiable = "" }),
			[]string{tsc + "[1].whenUnsatisfiable: Required value"}},
		{"whenUnsatisfiable enum", pod(func(p *corev1.PodSpec) { p.TopologySpreadConstraints[1].WhenUnsatisfiable = "Ignore" }),
			[]string{tsc + "[1].whenUnsatisfiable: Unsupported value"}},
		{"minDomains with ScheduleAnyway", pod(func(p *corev1.PodSpec) { p.TopologySpreadConstraints[1].MinDomains = ptr.To[int32](2) }),
			[]string{tsc + "[1].minDomains: Invalid value"}},
		{"duplicate constraint", pod(func(p *corev1.PodSpec) { p.TopologySpreadConstraints[1] = p.TopologySpreadConstraints[0] }),
			[]string{tsc + "[1]: Duplicate value"}},
		{"spread selector", pod(func(p *corev1.PodSpec) { p.TopologySpreadConstraints[0].LabelSelector.MatchLabels["x"] = "-" }),
			[]string{tsc + "[0].labelSelector.matchLabels[x]: Invalid value"}},
		{"node taints policy", pod(func(p *corev1.PodSpec) {
			p.TopologySpreadConstraints[1].NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicy("Always"))
		}),
			[]string{tsc + "[1].nodeTaintsPolicy: Unsupported value"}},
	})
}

func TestPodLevelRules(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{"sysctl name", pod(func(p *corev1.PodSpec) { p.SecurityContext.Sysctls[0].Name = "bad name" }),
			[]string{podP + ".securityContext.sysctls[0].name: Invalid value"}},
		{"scheduler name", pod(func(p *corev1.PodSpec) { p.SchedulerName = "TiDB Scheduler" }),
			[]string{podP + ".schedulerName: Invalid value"}},
		{"priority class name", pod(func(p *corev1.PodSpec) { p.PriorityClassName = "high_priority" }),
			[]string{podP + ".priorityClassName: Invalid value"}},
		{"service account name", pod(func(p *corev1.PodSpec) { p.ServiceAccountName = "basic/tikv" }),
			[]string{podP + ".serviceAccountName: Invalid value"}},
		{"dns policy", pod(func(p *corev1.PodSpec) { p.DNSPolicy = "ClusterOnly" }),
			[]string{podP + ".dnsPolicy: Unsupported value"}},
		{"dns policy None without nameservers", pod(func(p *corev1.PodSpec) { p.DNSPolicy = corev1.DNSNone; p.DNSConfig.Nameservers = nil }),
			[]string{podP + ".dnsConfig.nameservers: Required value"}},
		{"too many nameservers", pod(func(p *corev1.PodSpec) {
			p.DNSConfig.Nameservers = []string{"1.1.1.1", "8.8.8.8", "9.9.9.9", "1.0.0.1"}
		}),
			[]string{podP + ".dnsConfig.nameservers: Too many"}},
		{"nameserver not an IP", pod(func(p *corev1.PodSpec) { p.DNSConfig.Nameservers = []string{"dns.local"} }),
			[]string{podP + ".dnsConfig.nameservers[0]: Invalid value"}},
		{"too many searches", pod(func(p *corev1.PodSpec) { p.DNSConfig.Searches = strings.Split(strings.Repeat("a.b ", 33), " ")[:33] }),
			[]string{podP + ".dnsConfig.searches: Too many"}},
		{"search list too long", pod(func(p *corev1.PodSpec) {
			p.DNSConfig.Searches = []string{strings.Repeat("a", 60) + "." + strings.Repeat("b", 60)}
			for len(strings.Join(p.DNSConfig.Searches, " ")) <= maxDNSSearchListChars {
				p.DNSConfig.Searches = append(p.DNSConfig.Searches, p.DNSConfig.Searches[0])
			}
		}), []string{podP + ".dnsConfig.searches: Invalid value"}},
		{"search not a domain", pod(func(p *corev1.PodSpec) { p.DNSConfig.Searches = []string{"bad domain"} }),
			[]string{podP + ".dnsConfig.searches[0]: Invalid value"}},
		{"search dot and underscore", pod(func(p *corev1.PodSpec) { p.DNSConfig.Searches = []string{".", "_srv.example.com"} }), nil},
		{"dns option name", pod(func(p *corev1.PodSpec) { p.DNSConfig.Options[0].Name = "" }),
			[]string{podP + ".dnsConfig.options[0].name: Required value"}},
		{"negative grace period", pod(func(p *corev1.PodSpec) { p.TerminationGracePeriodSeconds = ptr.To[int64](-1) }),
			[]string{podP + ".terminationGracePeriodSeconds: Invalid value"}},
		{"hostname", pod(func(p *corev1.PodSpec) { p.Hostname = "tikv.0" }),
			[]string{podP + ".hostname: Invalid value"}},
		{"subdomain", pod(func(p *corev1.PodSpec) { p.Subdomain = "Peer" }),
			[]string{podP + ".subdomain: Invalid value"}},
		{"host alias IP", pod(func(p *corev1.PodSpec) { p.HostAliases[0].IP = "pd" }),
			[]string{podP + ".hostAliases[0].ip: Invalid value"}},
		{"runAsUser negative", pod(func(p *corev1.PodSpec) { p.SecurityContext.RunAsUser = ptr.To[int64](-1) }),
			[]string{podP + ".securityContext.runAsUser: Invalid value"}},
		{"fsGroup negative", pod(func(p *corev1.PodSpec) { p.SecurityContext.FSGroup = ptr.To[int64](-5) }),
			[]string{podP + ".securityContext.fsGroup: Invalid value"}},
		{"supplemental group", pod(func(p *corev1.PodSpec) { p.SecurityContext.SupplementalGroups = []int64{1 << 40} }),
			[]string{podP + ".securityContext.supplementalGroups[0]: Invalid value"}},
		{"fsGroupChangePolicy", pod(func(p *corev1.PodSpec) {
			p.SecurityContext.FSGroupChangePolicy = ptr.To(corev1.PodFSGroupChangePolicy("Never"))
		}), []string{podP + ".securityContext.fsGroupChangePolicy: Unsupported value"}},
		{"seccomp localhost without profile", pod(func(p *corev1.PodSpec) {
			p.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}
		}), []string{podP + ".securityContext.seccompProfile.localhostProfile: Required value"}},
		{"duplicate sysctl", pod(func(p *corev1.PodSpec) {
			p.SecurityContext.Sysctls = append(p.SecurityContext.Sysctls, p.SecurityContext.Sysctls[0])
		}),
			[]string{podP + ".securityContext.sysctls[1].name: Duplicate value"}},
		{"image pull secret names are not checked", pod(func(p *corev1.PodSpec) { p.ImagePullSecrets = []corev1.LocalObjectReference{{}} }), nil},
	})
}

func TestVolumeRules(t *testing.T) {
	t.Parallel()
	vp := podP + ".volumes"
	runRuleCases(t, []ruleCase{
		{"volume name", pod(func(p *corev1.PodSpec) { p.Volumes[4].Name = "Scratch" }),
			[]string{vp + "[4].name: Invalid value"}},
		{"volume without name", pod(func(p *corev1.PodSpec) { p.Volumes[4].Name = "" }),
			[]string{vp + "[4].name: Required value"}},
		{"duplicate volume", pod(func(p *corev1.PodSpec) { p.Volumes[4].Name = "tls" }),
			[]string{vp + "[4].name: Duplicate value"}},
		{"two sources", pod(func(p *corev1.PodSpec) { p.Volumes[3].EmptyDir = &corev1.EmptyDirVolumeSource{} }),
			[]string{vp + "[3]: Forbidden"}},
		{"secret name", pod(func(p *corev1.PodSpec) { p.Volumes[3].Secret.SecretName = "" }),
			[]string{vp + "[3].secret.secretName: Required value"}},
		{"file mode", pod(func(p *corev1.PodSpec) { p.Volumes[3].Secret.DefaultMode = ptr.To[int32](0o1777) }),
			[]string{vp + "[3].secret.defaultMode: Invalid value"}},
		{"configmap item path", pod(func(p *corev1.PodSpec) { p.Volumes[0].ConfigMap.Items[0].Path = "../tikv.toml" }),
			[]string{vp + "[0].configMap.items[0].path: Invalid value"}},
		{"configmap item absolute path", pod(func(p *corev1.PodSpec) { p.Volumes[0].ConfigMap.Items[0].Path = "/tikv.toml" }),
			[]string{vp + "[0].configMap.items[0].path: Invalid value"}},
		{"configmap item key", pod(func(p *corev1.PodSpec) { p.Volumes[0].ConfigMap.Items[0].Key = "" }),
			[]string{vp + "[0].configMap.items[0].key: Required value"}},
		{"downward API item", pod(func(p *corev1.PodSpec) { p.Volumes[2].DownwardAPI.Items[0].FieldRef = nil }),
			[]string{vp + "[2].downwardAPI.items[0]: Invalid value"}},
		{"pvc claim name", pod(func(p *corev1.PodSpec) {
			p.Volumes[4].PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{}
		}), []string{vp + "[4].persistentVolumeClaim.claimName: Required value"}},
		{"host path", pod(func(p *corev1.PodSpec) {
			p.Volumes[4].HostPath = &corev1.HostPathVolumeSource{Path: "/data", Type: ptr.To(corev1.HostPathType("Dir"))}
		}), []string{vp + "[4].hostPath.type: Unsupported value"}},
		{"emptyDir size", pod(func(p *corev1.PodSpec) {
			p.Volumes[4].EmptyDir = &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("-1Gi"))}
		}), []string{vp + "[4].emptyDir.sizeLimit: Invalid value"}},
		{"projected source with two projections", pod(func(p *corev1.PodSpec) {
			p.Volumes[4].Projected = &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
				ConfigMap: &corev1.ConfigMapProjection{}, Secret: &corev1.SecretProjection{}}}}
		}), []string{vp + "[4].projected.sources[0]: Forbidden"}},
	})
}
