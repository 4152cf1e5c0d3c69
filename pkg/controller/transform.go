package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

// DropManagedFields is the informers' transform: it removes
// metadata.managedFields, which no controller reads and which is often the
// larger part of a cached object, and makes the object share its label
// keys and values, namespace, annotation keys and owner references with
// the other cached objects (internMeta). An update sent from a cached copy
// leaves the server's managedFields as they are (they are only reset by an
// empty list, never by an absent one). Objects without metadata pass
// unchanged.
func DropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		internMeta(m)
	}
	return obj, nil
}

// StripCached is the transform of the informers of the objects the
// operator labels (pods, StatefulSets, Services, ConfigMaps, PVCs, PVs, …):
// DropManagedFields; for a pod, PVC or PV what StripPod, StripPVC or
// StripPV drop; for a Service, ServiceAccount, Role or RoleBinding it
// applied what apply.StripApplied drops; for a StatefulSet or Deployment
// what apply.StripTemplate drops of its pod template; the data of a
// ConfigMap the operator wrote (stripConfigMap). The label maps of all but
// pods, PVCs and PVs, the annotations of pods and the storage sizes of
// claims are shared copies (shareLabelMaps, cacheResources).
func StripCached(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		StripPod(o)
	case *appsv1.StatefulSet:
		apply.StripTemplate(&o.Spec.Template)
		internContainers(o.Spec.Template.Spec.Containers)
	case *appsv1.Deployment:
		apply.StripTemplate(&o.Spec.Template)
		internContainers(o.Spec.Template.Spec.Containers)
	case *corev1.ConfigMap:
		stripConfigMap(o)
	case *corev1.PersistentVolumeClaim:
		StripPVC(o)
	case *corev1.PersistentVolume:
		StripPV(o)
	case metav1.Object:
		apply.StripApplied(o)
	}
	obj, err := DropManagedFields(obj)
	shareLabelMaps(obj)
	return obj, err
}

// unreadPodLabels are the labels the StatefulSet controller puts on every
// pod that no code of the operator reads or selects by (it reads the
// revision hash): without them a member's labels fit the smallest map.
var unreadPodLabels = []string{appsv1.StatefulSetPodNameLabel, appsv1.PodIndexLabel}

// StripPod keeps of a pod's spec only what the operator reads from its pod
// cache — the node and scheduler, each container's name and image (which
// version a pod runs), and the volumes backed by a PVC (which PVCs are a
// member's) — and drops the rest (commands, environment, mounts, probes,
// resources, affinity, other volumes: the larger part of a cached pod).
// Of its status it keeps the phase, reason and message, the Ready and
// PodScheduled conditions (the only ones read) but their probe times, and
// each container's name, readiness, restart count
// and state (what Ready, readySince and the diagnosis read); addresses,
// start time, images and container IDs go. Metadata is kept whole but
// for the StatefulSet's pod-name and pod-index labels. The
// operator never sends a cached pod back: it changes pods only by patches
// of their metadata, and deletes them.
func StripPod(p *corev1.Pod) {
	spec := corev1.PodSpec{
		NodeName:      p.Spec.NodeName,
		SchedulerName: p.Spec.SchedulerName,
	}
	for _, c := range p.Spec.Containers {
		spec.Containers = append(spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
	}
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			spec.Volumes = append(spec.Volumes, v)
		}
	}
	internContainers(spec.Containers)
	spec.NodeName, spec.SchedulerName = cacheStrings.intern(spec.NodeName), cacheStrings.intern(spec.SchedulerName)
	p.Spec = spec
	for _, k := range unreadPodLabels {
		delete(p.Labels, k)
	}
	p.Status = stripPodStatus(&p.Status)
}

func stripPodStatus(s *corev1.PodStatus) corev1.PodStatus {
	out := corev1.PodStatus{Phase: s.Phase, Reason: s.Reason, Message: s.Message}
	for _, c := range s.Conditions {
		if c.Type != corev1.PodReady && c.Type != corev1.PodScheduled {
			continue
		}
		if out.Conditions == nil {
			out.Conditions = make([]corev1.PodCondition, 0, 2)
		}
		in := cacheStrings.intern
		out.Conditions = append(out.Conditions, corev1.PodCondition{Type: corev1.PodConditionType(in(string(c.Type))),
			Status: corev1.ConditionStatus(in(string(c.Status))), Reason: in(c.Reason), Message: c.Message,
			LastTransitionTime: c.LastTransitionTime})
	}
	out.InitContainerStatuses = stripContainerStatuses(s.InitContainerStatuses)
	out.ContainerStatuses = stripContainerStatuses(s.ContainerStatuses)
	return out
}

func stripContainerStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(in))
	for i, c := range in {
		out[i] = corev1.ContainerStatus{Name: cacheStrings.intern(c.Name), Ready: c.Ready,
			RestartCount: c.RestartCount, State: c.State}
	}
	return out
}

// StripPVC keeps of a claim what the operator reads from its PVC cache:
// metadata, the bound volume, storage class, attributes class and
// requests, and the status's phase, capacity and volume-attributes
// modification; access modes, selectors, data sources and conditions go.
// Claims are changed only by patches.
func StripPVC(c *corev1.PersistentVolumeClaim) {
	c.Spec = corev1.PersistentVolumeClaimSpec{VolumeName: c.Spec.VolumeName,
		StorageClassName: internPtr(c.Spec.StorageClassName), VolumeAttributesClassName: c.Spec.VolumeAttributesClassName,
		Resources: corev1.VolumeResourceRequirements{Requests: cacheResources.intern(c.Spec.Resources.Requests)}}
	c.Status = corev1.PersistentVolumeClaimStatus{Phase: c.Status.Phase, Capacity: cacheResources.intern(c.Status.Capacity),
		ModifyVolumeStatus: c.Status.ModifyVolumeStatus, CurrentVolumeAttributesClassName: c.Status.CurrentVolumeAttributesClassName}
}

// StripPV keeps of a volume what the operator reads from its PV cache:
// metadata (the labels it syncs) and the reclaim policy; its source,
// capacity, node affinity and claim reference go. Volumes are changed only
// by patches.
func StripPV(v *corev1.PersistentVolume) {
	v.Spec = corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: v.Spec.PersistentVolumeReclaimPolicy}
	v.Status = corev1.PersistentVolumeStatus{Phase: v.Status.Phase}
}

func internPtr(s *string) *string {
	if s == nil {
		return nil
	}
	v := cacheStrings.intern(*s)
	return &v
}

// stripConfigMap drops the data of a ConfigMap the operator wrote (it
// carries apply.AnnAppliedHash; binaryData, which the operator never sets
// and an update keeps, stays): the applier writes desired data whole
// and compares hashes, and the one reader of a mounted config
// (component's sameAsInUse) compares the recorded hash and reads the data
// from the API only when it differs. Another operator's ConfigMap keeps
// its data: it is compared by meaning on every sync until replaced.
func stripConfigMap(cm *corev1.ConfigMap) {
	if cm.Annotations[apply.AnnAppliedHash] != "" {
		cm.Data = nil
	}
}

// internContainers makes the stripped containers share their names and
// images with the other cached objects.
func internContainers(cs []corev1.Container) {
	for i := range cs {
		cs[i].Name, cs[i].Image = cacheStrings.intern(cs[i].Name), cacheStrings.intern(cs[i].Image)
	}
}

// StripJob is the Job informer's transform: DropManagedFields, and the pod
// template's spec, which the Backup and Restore controllers never read (they
// create Jobs and read their metadata and status only, and never update
// one). Other objects pass through DropManagedFields alone.
func StripJob(obj any) (any, error) {
	if j, ok := obj.(*batchv1.Job); ok {
		j.Spec.Template.Spec = corev1.PodSpec{}
	}
	return DropManagedFields(obj)
}
