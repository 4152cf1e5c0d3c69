package precheck

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	tolerationOperators = []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}
	taintEffects        = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	unsatisfiableWhens  = []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
	inclusionPolicies   = []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}
	nodeSelectorOps     = []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn,
		corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}
)

// checkScheduling checks what places a pod: nodeSelector, tolerations,
// affinity, topology spread constraints and scheduling names.
func checkScheduling(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	errs := checkLabels(spec.NodeSelector, p.Child("nodeSelector"))
	for i := range spec.Tolerations {
		errs = append(errs, checkToleration(&spec.Tolerations[i], p.Child("tolerations").Index(i))...)
	}
	errs = append(errs, checkAffinity(spec.Affinity, p.Child("affinity"))...)
	errs = append(errs, checkTopologySpread(spec.TopologySpreadConstraints, p.Child("topologySpreadConstraints"))...)
	return append(errs, checkSchedulingNames(spec, p)...)
}

// checkToleration: the key is a qualified name, or empty with operator
// Exists; operator Equal or Exists; Exists takes no value and Equal a label
// value; a known effect; tolerationSeconds only with effect NoExecute.
func checkToleration(t *corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metavalidation.ValidateLabelName(t.Key, p.Child("key"))...)
	} else if t.Operator != corev1.TolerationOpExists {
		errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "value must be empty when `operator` is 'Exists'"))
		}
	case corev1.TolerationOpEqual, "":
		errs = append(errs, invalidAll(p.Child("value"), t.Value, utilvalidation.IsValidLabelValue(t.Value))...)
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, tolerationOperators))
	}
	errs = append(errs, oneOf(p.Child("effect"), t.Effect, taintEffects...)...)
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
	}
	return errs
}

// checkAffinity checks node affinity (at least one required term; terms,
// weights) and pod (anti-)affinity terms.
func checkAffinity(a *corev1.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			rp := np.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(r.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp, "must have at least one node selector term"))
			}
			for i := range r.NodeSelectorTerms {
				errs = append(errs, checkNodeSelectorTerm(&r.NodeSelectorTerms[i], rp.Index(i))...)
			}
		}
		for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			t, tp := &na.PreferredDuringSchedulingIgnoredDuringExecution[i], np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, weight(tp.Child("weight"), t.Weight)...)
			errs = append(errs, checkNodeSelectorTerm(&t.Preference, tp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, checkPodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, checkPodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAntiAffinity"))...)
	}
	return errs
}

func weight(p *field.Path, w int32) field.ErrorList {
	if w < 1 || w > 100 {
		return field.ErrorList{field.Invalid(p, w, "must be in the range 1-100")}
	}
	return nil
}

// checkNodeSelectorTerm: expression keys are qualified names with a known
// operator and matching values; fields only match metadata.name with In or
// NotIn and one value.
func checkNodeSelectorTerm(t *corev1.NodeSelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		rp := p.Child("matchExpressions").Index(i)
		errs = append(errs, metavalidation.ValidateLabelName(r.Key, rp.Child("key"))...)
		errs = append(errs, checkNodeSelectorValues(r, rp)...)
	}
	for i, r := range t.MatchFields {
		rp := p.Child("matchFields").Index(i)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(rp.Child("key"), r.Key, []string{"metadata.name"}))
		}
		if r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn {
			errs = append(errs, field.NotSupported(rp.Child("operator"), r.Operator, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}))
		}
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(rp.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	}
	return errs
}

func checkNodeSelectorValues(r corev1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	vp := p.Child("values")
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return field.ErrorList{field.Required(vp, "must be specified when `operator` is 'In' or 'NotIn'")}
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			return field.ErrorList{field.Forbidden(vp, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")}
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return field.ErrorList{field.Required(vp, "must be specified single value when `operator` is 'Lt' or 'Gt'")}
		}
		if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			return field.ErrorList{field.Invalid(vp.Index(0), r.Values[0], "must be an integer when `operator` is 'Lt' or 'Gt'")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("operator"), r.Operator, nodeSelectorOps)}
	}
	return nil
}

func checkPodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range required {
		errs = append(errs, checkPodAffinityTerm(&required[i], p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i := range preferred {
		tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, weight(tp.Child("weight"), preferred[i].Weight)...)
		errs = append(errs, checkPodAffinityTerm(&preferred[i].PodAffinityTerm, tp.Child("podAffinityTerm"))...)
	}
	return errs
}

// checkPodAffinityTerm: a required qualified-name topologyKey, valid label
// and namespace selectors, DNS-1123 label namespaces, qualified-name match
// and mismatch label keys.
func checkPodAffinityTerm(t *corev1.PodAffinityTerm, p *field.Path) field.ErrorList {
	errs := qualifiedName(p.Child("topologyKey"), t.TopologyKey)
	errs = append(errs, checkLabelSelector(t.LabelSelector, p.Child("labelSelector"))...)
	errs = append(errs, checkLabelSelector(t.NamespaceSelector, p.Child("namespaceSelector"))...)
	for i, ns := range t.Namespaces {
		errs = append(errs, dnsLabel(p.Child("namespaces").Index(i), ns)...)
	}
	for i, k := range t.MatchLabelKeys {
		errs = append(errs, qualifiedName(p.Child("matchLabelKeys").Index(i), k)...)
	}
	for i, k := range t.MismatchLabelKeys {
		errs = append(errs, qualifiedName(p.Child("mismatchLabelKeys").Index(i), k)...)
	}
	return errs
}

// checkTopologySpread: maxSkew > 0; a qualified-name topologyKey; a known
// whenUnsatisfiable; minDomains > 0 and only with DoNotSchedule; known
// inclusion policies; a valid label selector and match label keys; no two
// constraints with the same topologyKey and whenUnsatisfiable.
func checkTopologySpread(cs []corev1.TopologySpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i := range cs {
		c, cp := &cs[i], p.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		errs = append(errs, qualifiedName(cp.Child("topologyKey"), c.TopologyKey)...)
		errs = append(errs, requiredOneOf(cp.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, unsatisfiableWhens...)...)
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), *c.MinDomains, "must be greater than zero"))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), *c.MinDomains, "can only be used when `whenUnsatisfiable` is 'DoNotSchedule'"))
			}
		}
		if c.NodeAffinityPolicy != nil {
			errs = append(errs, requiredOneOf(cp.Child("nodeAffinityPolicy"), *c.NodeAffinityPolicy, inclusionPolicies...)...)
		}
		if c.NodeTaintsPolicy != nil {
			errs = append(errs, requiredOneOf(cp.Child("nodeTaintsPolicy"), *c.NodeTaintsPolicy, inclusionPolicies...)...)
		}
		errs = append(errs, checkLabelSelector(c.LabelSelector, cp.Child("labelSelector"))...)
		for j, k := range c.MatchLabelKeys {
			errs = append(errs, qualifiedName(cp.Child("matchLabelKeys").Index(j), k)...)
		}
		key := c.TopologyKey + "/" + string(c.WhenUnsatisfiable)
		if seen[key] {
			errs = append(errs, field.Duplicate(cp, key))
		}
		seen[key] = true
	}
	return errs
}
