package apply

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations the TiDB Operator v1 leaves on the objects it applied: the
// JSON of the last applied spec (StatefulSets, Services) and of the
// discovery Deployment's pod template. Nothing of ours reads them; the
// first write after a takeover removes them from the object (never from a
// pod template, whose change would restart the pods).
const (
	AnnV1LastApplied            = "pingcap.com/last-applied-configuration"
	AnnV1LastAppliedPodTemplate = "pingcap.com/last-applied-podtemplate"
)

// AnnAdoptedTemplate marks a StatefulSet or Deployment whose pod template
// was kept as another operator left it, because it means the same as ours:
// its value is the hash of the template we would have written. While our
// template keeps that hash, the live one stays; once ours changes (a real
// change), ours is written, the pods roll, and the mark goes.
const AnnAdoptedTemplate = "tidb.kubetidb.io/adopted-template"

// staleAnnotations are removed from an object's own annotations when it is
// written, unless the desired object sets them.
var staleAnnotations = []string{AnnV1LastApplied, AnnV1LastAppliedPodTemplate, AnnAdoptedTemplate}

// hasStaleAnnotations reports a stale annotation on live that desired does
// not set: the object needs one write to drop it.
func hasStaleAnnotations(live, desired metav1.Object) bool {
	for _, k := range staleAnnotations {
		if _, ok := live.GetAnnotations()[k]; ok {
			if _, keep := desired.GetAnnotations()[k]; !keep {
				return true
			}
		}
	}
	return false
}

// dropStaleAnnotations removes from obj the stale annotations desired does
// not set.
func dropStaleAnnotations(obj, desired metav1.Object) {
	ann := obj.GetAnnotations()
	for _, k := range staleAnnotations {
		if _, keep := desired.GetAnnotations()[k]; !keep {
			delete(ann, k)
		}
	}
	obj.SetAnnotations(ann)
}

// adoptTemplate decides whether the write of desired keeps live's pod
// template (template reads it from an object): when live carries the mark
// for desired's template, or when live was never applied by us and its
// template means the same (SameTemplateMeaning); it then marks desired
// (keepsLiveTemplate). The cached live template is stripped
// (StripTemplate), so the comparison reads the whole object with whole,
// once per object: the first write records our hash. An error of whole is
// returned.
func adoptTemplate[T object](live, desired T, whole func() (T, error), template func(T) *corev1.PodTemplateSpec,
	ignoreImages bool) error {
	h, err := Hash(template(desired))
	if err != nil {
		return err
	}
	switch ann := live.GetAnnotations(); {
	case ann[AnnAdoptedTemplate] == h:
	case ann[AnnAppliedHash] == "":
		w, err := whole()
		if err != nil {
			return err
		}
		if !SameTemplateMeaning(template(w), template(desired), ignoreImages) {
			return nil
		}
	default:
		return nil
	}
	annotate(desired, AnnAdoptedTemplate, h)
	return nil
}

// StripTemplate is what the informer caches keep of a StatefulSet's or
// Deployment's pod template (controller.StripCached): its metadata, each
// container's name and image (which version the template runs) and each
// volume's name with the ConfigMap, Secret or claim it mounts (which config
// it uses, which Secret it needs); the rest of its spec is dropped. No
// cached template is sent back: the Applier writes the desired template,
// and reads the live one whole from the API where it compares or keeps it
// (adoptTemplate, keepsLiveTemplate).
func StripTemplate(t *corev1.PodTemplateSpec) {
	spec := corev1.PodSpec{}
	for _, c := range t.Spec.Containers {
		spec.Containers = append(spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
	}
	for _, v := range t.Spec.Volumes {
		spec.Volumes = append(spec.Volumes, strippedVolume(v))
	}
	t.Spec = spec
}

// strippedVolume keeps a volume's name and what it mounts by name.
func strippedVolume(v corev1.Volume) corev1.Volume {
	out := corev1.Volume{Name: v.Name}
	switch {
	case v.ConfigMap != nil:
		out.ConfigMap = &corev1.ConfigMapVolumeSource{LocalObjectReference: v.ConfigMap.LocalObjectReference,
			Optional: v.ConfigMap.Optional}
	case v.Secret != nil:
		out.Secret = &corev1.SecretVolumeSource{SecretName: v.Secret.SecretName, Optional: v.Secret.Optional}
	case v.PersistentVolumeClaim != nil:
		out.PersistentVolumeClaim = v.PersistentVolumeClaim
	}
	return out
}

// keepsLiveTemplate reports a desired object marked by adoptTemplate: its
// write keeps the live pod template.
func keepsLiveTemplate(desired metav1.Object) bool {
	return desired.GetAnnotations()[AnnAdoptedTemplate] != ""
}

// DeleteConfigMap deletes the ConfigMap name under the preconditions pre
// (nil: none), for the reason given; one already gone is not an error.
// Callers must have made sure no pod template mounts it.
func (a *Applier) DeleteConfigMap(ctx context.Context, owner Owner, name string, pre *metav1.Preconditions, reason string) error {
	err := a.kube.CoreV1().ConfigMaps(owner.GetNamespace()).Delete(ctx, name, metav1.DeleteOptions{Preconditions: pre})
	a.recent.seen(writeKey("ConfigMap", owner.GetNamespace(), name))
	return a.recordDelete(ctx, owner, "ConfigMap", name, reason, err)
}

// StripApplied is what the informer caches keep of a Service,
// ServiceAccount, Role or RoleBinding the operator applied (it carries
// AnnAppliedHash): its metadata only. The recorded hash tells whether it
// needs a write; an update reads the object whole from the API first (the
// metaOnly kinds of apply), so the fields the API server set (a Service's
// cluster IPs and node ports, a ServiceAccount's secrets) are kept. Any
// other object, one another operator left, is kept whole: it is compared
// by meaning until replaced. It reports whether obj was stripped.
func StripApplied(obj metav1.Object) bool {
	if obj.GetAnnotations()[AnnAppliedHash] == "" {
		return false
	}
	switch o := obj.(type) {
	case *corev1.Service:
		o.Spec, o.Status = corev1.ServiceSpec{}, corev1.ServiceStatus{}
	case *corev1.ServiceAccount:
		o.Secrets, o.ImagePullSecrets, o.AutomountServiceAccountToken = nil, nil, nil
	case *rbacv1.Role:
		o.Rules = nil
	case *rbacv1.RoleBinding:
		o.Subjects, o.RoleRef = nil, rbacv1.RoleRef{}
	default:
		return false
	}
	return true
}
