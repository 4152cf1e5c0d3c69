package precheck

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	podManagementPolicies = []appsv1.PodManagementPolicyType{appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement}
	stsUpdateStrategies   = []appsv1.StatefulSetUpdateStrategyType{appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType}
	deployStrategies      = []appsv1.DeploymentStrategyType{appsv1.RecreateDeploymentStrategyType, appsv1.RollingUpdateDeploymentStrategyType}
	retentionPolicies     = []appsv1.PersistentVolumeClaimRetentionPolicyType{appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType}
	accessModes           = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod}
	volumeModes           = []corev1.PersistentVolumeMode{corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock}
)

// checkStatefulSet checks a StatefulSet: a DNS-1123 label name of at most
// 52 characters, metadata, replicas, policies, update strategy, selector and
// template, and the volume claim templates (whose names the pod's volume
// mounts may refer to, because the controller adds them as volumes).
func checkStatefulSet(s *appsv1.StatefulSet, root *field.Path) field.ErrorList {
	p := root.Child("spec")
	spec := &s.Spec
	errs := checkObjectMeta(&s.ObjectMeta, nameIsStatefulSet, root.Child("metadata"))
	errs = append(errs, nonNegative(p.Child("replicas"), spec.Replicas)...)
	errs = append(errs, nonNegative(p.Child("minReadySeconds"), &spec.MinReadySeconds)...)
	errs = append(errs, nonNegative(p.Child("revisionHistoryLimit"), spec.RevisionHistoryLimit)...)
	errs = append(errs, oneOf(p.Child("podManagementPolicy"), spec.PodManagementPolicy, podManagementPolicies...)...)
	if spec.ServiceName != "" {
		// Pods get the service name as their DNS subdomain.
		errs = append(errs, dnsLabel(p.Child("serviceName"), spec.ServiceName)...)
	}
	errs = append(errs, checkStatefulSetStrategy(&spec.UpdateStrategy, p.Child("updateStrategy"))...)
	if r := spec.PersistentVolumeClaimRetentionPolicy; r != nil {
		rp := p.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, oneOf(rp.Child("whenDeleted"), r.WhenDeleted, retentionPolicies...)...)
		errs = append(errs, oneOf(rp.Child("whenScaled"), r.WhenScaled, retentionPolicies...)...)
	}
	if spec.Ordinals != nil {
		errs = append(errs, nonNegative(p.Child("ordinals", "start"), &spec.Ordinals.Start)...)
	}
	claims := map[string]bool{}
	for i := range spec.VolumeClaimTemplates {
		errs = append(errs, checkClaimTemplate(&spec.VolumeClaimTemplates[i], p.Child("volumeClaimTemplates").Index(i))...)
		claims[spec.VolumeClaimTemplates[i].Name] = true
	}
	errs = append(errs, checkSelector(spec.Selector, spec.Template.Labels, p)...)
	return append(errs, checkWorkloadTemplate(&spec.Template, claims, p.Child("template"))...)
}

func checkStatefulSetStrategy(s *appsv1.StatefulSetUpdateStrategy, p *field.Path) field.ErrorList {
	errs := oneOf(p.Child("type"), s.Type, stsUpdateStrategies...)
	ru := s.RollingUpdate
	if ru == nil {
		return errs
	}
	if s.Type == appsv1.OnDeleteStatefulSetStrategyType {
		errs = append(errs, field.Invalid(p.Child("rollingUpdate"), "", "only allowed for updateStrategy 'RollingUpdate'"))
	}
	errs = append(errs, nonNegative(p.Child("rollingUpdate", "partition"), ru.Partition)...)
	if ru.MaxUnavailable != nil {
		errs = append(errs, intOrPercent(p.Child("rollingUpdate", "maxUnavailable"), *ru.MaxUnavailable, true)...)
	}
	return errs
}

// checkDeployment checks a Deployment: a DNS-1123 subdomain name, metadata,
// replicas, strategy, deadlines, selector and template.
func checkDeployment(d *appsv1.Deployment, root *field.Path) field.ErrorList {
	p := root.Child("spec")
	spec := &d.Spec
	errs := checkObjectMeta(&d.ObjectMeta, nameIsSubdomain, root.Child("metadata"))
	errs = append(errs, nonNegative(p.Child("replicas"), spec.Replicas)...)
	errs = append(errs, nonNegative(p.Child("minReadySeconds"), &spec.MinReadySeconds)...)
	errs = append(errs, nonNegative(p.Child("revisionHistoryLimit"), spec.RevisionHistoryLimit)...)
	if pd := spec.ProgressDeadlineSeconds; pd != nil && *pd <= spec.MinReadySeconds {
		errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), *pd, "must be greater than minReadySeconds"))
	}
	errs = append(errs, checkDeploymentStrategy(&spec.Strategy, p.Child("strategy"))...)
	errs = append(errs, checkSelector(spec.Selector, spec.Template.Labels, p)...)
	return append(errs, checkWorkloadTemplate(&spec.Template, nil, p.Child("template"))...)
}

func checkDeploymentStrategy(s *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	errs := oneOf(p.Child("type"), s.Type, deployStrategies...)
	ru := s.RollingUpdate
	if ru == nil {
		return errs
	}
	if s.Type == appsv1.RecreateDeploymentStrategyType {
		return append(errs, field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
	}
	rp := p.Child("rollingUpdate")
	if ru.MaxUnavailable != nil {
		errs = append(errs, intOrPercent(rp.Child("maxUnavailable"), *ru.MaxUnavailable, false)...)
	}
	if ru.MaxSurge != nil {
		errs = append(errs, intOrPercent(rp.Child("maxSurge"), *ru.MaxSurge, false)...)
	}
	if ru.MaxUnavailable != nil && ru.MaxSurge != nil && isZero(*ru.MaxUnavailable) && isZero(*ru.MaxSurge) {
		errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable.String(), "may not be 0 when `maxSurge` is 0"))
	}
	return errs
}

// intOrPercent checks a count or a percentage "N%": not negative, a
// percentage at most 100%, and above zero when positive is set.
func intOrPercent(p *field.Path, v intstr.IntOrString, positive bool) field.ErrorList {
	n := int(v.IntVal)
	if v.Type == intstr.String {
		if msgs := utilvalidation.IsValidPercent(v.StrVal); len(msgs) > 0 {
			return invalidAll(p, v.StrVal, msgs)
		}
		var err error
		if n, err = strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); err != nil {
			return field.ErrorList{field.Invalid(p, v.StrVal, "must be an integer percentage")}
		}
		if n > 100 {
			return field.ErrorList{field.Invalid(p, v.StrVal, "must not be greater than 100%")}
		}
	}
	switch {
	case positive && n <= 0:
		return field.ErrorList{field.Invalid(p, v.String(), "must be greater than 0")}
	case n < 0:
		return field.ErrorList{field.Invalid(p, v.String(), "must be greater than or equal to 0")}
	}
	return nil
}

func isZero(v intstr.IntOrString) bool {
	return (v.Type == intstr.Int && v.IntVal == 0) || (v.Type == intstr.String && v.StrVal == "0%")
}

// checkSelector: a workload's selector is set, non-empty, valid, and
// selects the template's labels.
func checkSelector(sel *metav1.LabelSelector, templateLabels map[string]string, p *field.Path) field.ErrorList {
	sp := p.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(sp, "")}
	}
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return field.ErrorList{field.Invalid(sp, sel, "empty selector is invalid for a workload")}
	}
	errs := checkLabelSelector(sel, sp)
	if len(errs) > 0 {
		return errs
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(sp, sel, err.Error())}
	}
	if !s.Matches(labels.Set(templateLabels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), templateLabels, "`selector` does not match template `labels`"))
	}
	return errs
}

// checkWorkloadTemplate checks a controller's pod template: metadata, the
// pod spec, restartPolicy Always and no activeDeadlineSeconds. claims names
// the volumes the controller adds (StatefulSet claim templates).
func checkWorkloadTemplate(t *corev1.PodTemplateSpec, claims map[string]bool, p *field.Path) field.ErrorList {
	errs := checkTemplateMeta(&t.ObjectMeta, p.Child("metadata"))
	sp := p.Child("spec")
	errs = append(errs, checkPodSpec(&t.Spec, claims, sp)...)
	if t.Spec.RestartPolicy != "" && t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(sp.Child("restartPolicy"), t.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(sp.Child("activeDeadlineSeconds"), "not supported in a workload's pod template"))
	}
	return errs
}

// checkPod checks a bare Pod: a DNS-1123 subdomain name, metadata, spec.
func checkPod(pod *corev1.Pod, root *field.Path) field.ErrorList {
	errs := checkObjectMeta(&pod.ObjectMeta, nameIsSubdomain, root.Child("metadata"))
	sp := root.Child("spec")
	errs = append(errs, checkPodSpec(&pod.Spec, nil, sp)...)
	if ads := pod.Spec.ActiveDeadlineSeconds; ads != nil && *ads <= 0 {
		errs = append(errs, field.Invalid(sp.Child("activeDeadlineSeconds"), *ads, "must be greater than 0"))
	}
	return errs
}

// checkClaimTemplate: a DNS-1123 label name (it becomes a pod volume name),
// at least one valid access mode (ReadWriteOncePod alone), a positive
// storage request, volumeMode and storageClassName.
func checkClaimTemplate(c *corev1.PersistentVolumeClaim, p *field.Path) field.ErrorList {
	errs := dnsLabel(p.Child("metadata", "name"), c.Name)
	errs = append(errs, checkTemplateMeta(&c.ObjectMeta, p.Child("metadata"))...)
	sp := p.Child("spec")
	if len(c.Spec.AccessModes) == 0 {
		errs = append(errs, field.Required(sp.Child("accessModes"), "at least 1 access mode is required"))
	}
	for i, m := range c.Spec.AccessModes {
		errs = append(errs, requiredOneOf(sp.Child("accessModes").Index(i), m, accessModes...)...)
		if m == corev1.ReadWriteOncePod && len(c.Spec.AccessModes) > 1 {
			errs = append(errs, field.Forbidden(sp.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
		}
	}
	storage, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]
	rp := sp.Child("resources", "requests").Key(string(corev1.ResourceStorage))
	switch {
	case !ok:
		errs = append(errs, field.Required(rp, ""))
	case isHuge(storage):
		errs = append(errs, nonNegativeQuantity(rp, storage)...)
	case storage.Sign() <= 0:
		errs = append(errs, field.Invalid(rp, storage.String(), "must be greater than zero"))
	}
	errs = append(errs, checkResourceList(c.Spec.Resources.Limits, sp.Child("resources", "limits"), false)...)
	if c.Spec.VolumeMode != nil {
		errs = append(errs, oneOf(sp.Child("volumeMode"), *c.Spec.VolumeMode, volumeModes...)...)
	}
	if c.Spec.StorageClassName != nil {
		errs = append(errs, optionalSubdomain(sp.Child("storageClassName"), *c.Spec.StorageClassName)...)
	}
	if c.Spec.Selector != nil {
		errs = append(errs, checkLabelSelector(c.Spec.Selector, sp.Child("selector"))...)
	}
	return errs
}
