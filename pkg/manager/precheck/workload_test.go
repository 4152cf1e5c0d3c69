package precheck

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const deployP = "Deployment[basic-discovery]"

func deploy(mut func(*appsv1.Deployment)) metav1.Object {
	d := validDeployment()
	mut(d)
	return d
}

func TestStatefulSetRules(t *testing.T) {
	t.Parallel()
	claim := stsP + ".spec.volumeClaimTemplates[0]"
	runRuleCases(t, []ruleCase{
		{"negative replicas", sts(func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](-1) }),
			[]string{stsP + ".spec.replicas: Invalid value"}},
		{"zero replicas", sts(func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](0) }), nil},
		{"nil replicas", sts(func(s *appsv1.StatefulSet) { s.Spec.Replicas = nil }), nil},
		{"no selector", sts(func(s *appsv1.StatefulSet) { s.Spec.Selector = nil }),
			[]string{stsP + ".spec.selector: Required value"}},
		{"empty selector", sts(func(s *appsv1.StatefulSet) { s.Spec.Selector = &metav1.LabelSelector{} }),
			[]string{stsP + ".spec.selector: Invalid value"}},
		{"selector does not match template", sts(func(s *appsv1.StatefulSet) { s.Spec.Template.Labels["app.kubernetes.io/component"] = "pd" }),
			[]string{stsP + ".spec.template.metadata.labels: Invalid value"}},
		{"invalid selector expression", sts(func(s *appsv1.StatefulSet) {
			s.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Has"}}
		}), []string{stsP + ".spec.selector.matchExpressions[0].operator: Invalid value"}},
		{"pod management policy", sts(func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "Random" }),
			[]string{stsP + ".spec.podManagementPolicy: Unsupported value"}},
		{"update strategy type", sts(func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = "Rolling" }),
			[]string{stsP + ".spec.updateStrategy.type: Unsupported value"}},
		{"rolling update with OnDelete", sts(func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }),
			[]string{stsP + ".spec.updateStrategy.rollingUpdate: Invalid value"}},
		{"negative partition", sts(func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](-1) }),
			[]string{stsP + ".spec.updateStrategy.rollingUpdate.partition: Invalid value"}},
		{"zero maxUnavailable", sts(func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(0))
		}),
			[]string{stsP + ".spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{"maxUnavailable over 100%", sts(func(s *appsv1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("150%"))
		}),
			[]string{stsP + ".spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{"service name with a dot", sts(func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "peer.svc" }),
			[]string{stsP + ".spec.serviceName: Invalid value"}},
		{"restart policy Never", pod(func(p *corev1.PodSpec) { p.RestartPolicy = corev1.RestartPolicyNever }),
			[]string{podP + ".restartPolicy: Unsupported value"}},
		{"active deadline", pod(func(p *corev1.PodSpec) { p.ActiveDeadlineSeconds = ptr.To[int64](10) }),
			[]string{podP + ".activeDeadlineSeconds: Forbidden"}},
		{"claim name not a label", sts(func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Name = "Data" }),
			[]string{claim + ".metadata.name: Invalid value", podP + ".initContainers[0].volumeMounts[0].name: Not found",
				podP + ".containers[0].volumeMounts[0].name: Not found", podP + ".containers[1].volumeMounts[0].name: Not found"}},
		{"claim without storage request", sts(func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests = nil }),
			[]string{claim + ".spec.resources.requests[storage]: Required value"}},
		{"claim with zero storage", sts(func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}), []string{claim + ".spec.resources.requests[storage]: Invalid value"}},
		{"claim without access modes", sts(func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Spec.AccessModes = nil }),
			[]string{claim + ".spec.accessModes: Required value"}},
		{"claim access mode", sts(func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteAll"}
		}), []string{claim + ".spec.accessModes[0]: Unsupported value"}},
		{"claim ReadWriteOncePod with others", sts(func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce}
		}), []string{claim + ".spec.accessModes: Forbidden"}},
		{"claim storage class", sts(func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("Fast_SSD") }),
			[]string{claim + ".spec.storageClassName: Invalid value"}},
		{"claim volume mode", sts(func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode("Raw"))
		}), []string{claim + ".spec.volumeMode: Unsupported value"}},
		{"retention policy", sts(func(s *appsv1.StatefulSet) {
			s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Keep"}
		}), []string{stsP + ".spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value"}},
	})
}

func TestDeploymentRules(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{"bad name", deploy(func(d *appsv1.Deployment) { d.Name = "Discovery" }),
			[]string{"Deployment[Discovery].metadata.name: Invalid value"}},
		{"negative replicas", deploy(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](-2) }),
			[]string{deployP + ".spec.replicas: Invalid value"}},
		{"selector does not match", deploy(func(d *appsv1.Deployment) { d.Spec.Template.Labels = nil }),
			[]string{deployP + ".spec.template.metadata.labels: Invalid value"}},
		{"strategy type", deploy(func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "BlueGreen" }),
			[]string{deployP + ".spec.strategy.type: Unsupported value"}},
		{"rolling update with Recreate", deploy(func(d *appsv1.Deployment) { d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType }),
			[]string{deployP + ".spec.strategy.rollingUpdate: Forbidden"}},
		{"both zero", deploy(func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromString("0%")), MaxSurge: ptr.To(intstr.FromInt32(0))}
		}), []string{deployP + ".spec.strategy.rollingUpdate.maxUnavailable: Invalid value"}},
		{"negative surge", deploy(func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(-1)) }),
			[]string{deployP + ".spec.strategy.rollingUpdate.maxSurge: Invalid value"}},
		{"bad percentage", deploy(func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("ten%")) }),
			[]string{deployP + ".spec.strategy.rollingUpdate.maxSurge: Invalid value"}},
		{"progress deadline not above minReadySeconds", deploy(func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 600 }),
			[]string{deployP + ".spec.progressDeadlineSeconds: Invalid value"}},
		{"no containers", deploy(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers = nil }),
			[]string{deployP + ".spec.template.spec.containers: Required value"}},
	})
}
