package apply

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// SameTemplateMeaning reports whether a live pod template runs the same
// pods as desired: the same init containers by name and in order (they run
// one after another), the same containers by name in any order (they run
// side by side; the TiDB Operator v1 lists TiFlash's log tailers after
// tiflash, we before), each with the same command by meaning
// (sameCommand), the same environment, mounts and ports in any order, the
// same volumes in any order, and every field desired sets equal in live.
// Fields desired leaves unset are the API server's defaults and are not
// compared; annotations and labels only live has (another operator's) are
// kept and not compared. What desired adds that changes nothing the
// containers run is not required of live (leaveOutWhatLiveOmits).
// ignoreImages leaves container images out (the discovery Deployment,
// whose image serves the same protocol whichever operator made it).
func SameTemplateMeaning(live, desired *corev1.PodTemplateSpec, ignoreImages bool) bool {
	l, d := normalizedTemplate(live, ignoreImages), normalizedTemplate(desired, ignoreImages)
	containers, ok := inOrderOf(l.Spec.Containers, d.Spec.Containers)
	if !ok {
		return false
	}
	l.Spec.Containers = containers
	leaveOutWhatLiveOmits(l, d)
	if len(l.Spec.Volumes) != len(d.Spec.Volumes) ||
		!sameContainers(l.Spec.InitContainers, d.Spec.InitContainers) || !sameContainers(l.Spec.Containers, d.Spec.Containers) {
		return false
	}
	return equality.Semantic.DeepDerivative(d, l)
}

// inOrderOf returns live's containers in the order of desired's names;
// ok is false when the names differ.
func inOrderOf(live, desired []corev1.Container) ([]corev1.Container, bool) {
	if len(live) != len(desired) {
		return nil, false
	}
	out := make([]corev1.Container, 0, len(live))
	for _, d := range desired {
		i := slices.IndexFunc(live, func(c corev1.Container) bool { return c.Name == d.Name })
		if i < 0 {
			return nil, false
		}
		out = append(out, live[i])
	}
	return out, true
}

// sameContainers compares containers pairwise by name, the number of their
// lists and their commands by meaning; a command that means the same is
// then written as desired's in live, so that the field-wise comparison
// after it does not count its spelling.
func sameContainers(live, desired []corev1.Container) bool {
	if len(live) != len(desired) {
		return false
	}
	for i := range live {
		l, d := &live[i], &desired[i]
		if l.Name != d.Name || len(l.Env) != len(d.Env) || len(l.VolumeMounts) != len(d.VolumeMounts) ||
			len(l.Ports) != len(d.Ports) || !sameCommand(*l, *d) {
			return false
		}
		l.Command, l.Args = d.Command, d.Args
	}
	return true
}

// leaveOutWhatLiveOmits drops from d (desired, normalized) what we add to
// a pod that the TiDB Operator v1 leaves out for the same spec and that
// changes nothing the containers run, when l (live, its containers in d's
// order) lacks it too:
//   - a downward-API volume (the pod's annotations, which our start
//     scripts read only for the debug switch, not compared either) and its
//     mounts: v1 gives none to TiCDC and Pump;
//   - a readiness probe: it decides when the pod counts as Ready, not what
//     it runs (v1 gives TiProxy none), and a restart to add one would cut
//     every client connection of the proxy;
//   - TZ=UTC: UTC is the zone of a process without TZ (v1 sets no TZ for
//     TiProxy);
//   - a variable from the pod's own fields that neither container's inline
//     script reads (v1 gives Pump no NAMESPACE).
func leaveOutWhatLiveOmits(l, d *corev1.PodTemplateSpec) {
	for _, v := range slices.Clone(d.Spec.Volumes) {
		if v.DownwardAPI != nil && !slices.ContainsFunc(l.Spec.Volumes, func(o corev1.Volume) bool { return o.Name == v.Name }) {
			d.Spec.Volumes = slices.DeleteFunc(d.Spec.Volumes, func(o corev1.Volume) bool { return o.Name == v.Name })
			for _, cs := range [][]corev1.Container{d.Spec.InitContainers, d.Spec.Containers} {
				for i := range cs {
					cs[i].VolumeMounts = slices.DeleteFunc(cs[i].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == v.Name })
				}
			}
		}
	}
	for i := range d.Spec.Containers {
		if i < len(l.Spec.Containers) {
			leaveOutOfContainer(&l.Spec.Containers[i], &d.Spec.Containers[i])
		}
	}
}

// leaveOutOfContainer is leaveOutWhatLiveOmits for one container.
func leaveOutOfContainer(l, d *corev1.Container) {
	if d.ReadinessProbe != nil && l.ReadinessProbe == nil {
		d.ReadinessProbe = nil
	}
	scripts := inlineScriptText(*l) + "\n" + inlineScriptText(*d)
	d.Env = slices.DeleteFunc(d.Env, func(e corev1.EnvVar) bool {
		if slices.ContainsFunc(l.Env, func(o corev1.EnvVar) bool { return o.Name == e.Name }) {
			return false
		}
		if e.Name == "TZ" && e.Value == "UTC" && e.ValueFrom == nil {
			return true
		}
		return e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && inlineScriptText(*d) != "" && !mentionsVar(scripts, e.Name)
	})
}

// mentionsVar reports a reference to the variable name in script.
func mentionsVar(script, name string) bool {
	return strings.Contains(script, "$"+name) || strings.Contains(script, "${"+name)
}

// normalizedTemplate returns a copy of t with its lists in one order and
// the mounts of volumes the kubelet always mounts read-only (ConfigMap,
// Secret, downward API, projected) marked read-only.
func normalizedTemplate(t *corev1.PodTemplateSpec, ignoreImages bool) *corev1.PodTemplateSpec {
	t = t.DeepCopy()
	delete(t.Annotations, AnnV1LastApplied)
	slices.SortFunc(t.Spec.Volumes, func(a, b corev1.Volume) int { return cmp.Compare(a.Name, b.Name) })
	readOnly := map[string]bool{}
	for _, v := range t.Spec.Volumes {
		readOnly[v.Name] = v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil
	}
	for _, cs := range [][]corev1.Container{t.Spec.InitContainers, t.Spec.Containers} {
		for i := range cs {
			normalizeContainer(&cs[i], ignoreImages, readOnly)
		}
	}
	return t
}

func normalizeContainer(c *corev1.Container, ignoreImages bool, readOnly map[string]bool) {
	if ignoreImages {
		c.Image = ""
	}
	if !envRefersToEnv(c.Env) {
		slices.SortFunc(c.Env, func(a, b corev1.EnvVar) int { return cmp.Compare(a.Name, b.Name) })
	}
	for i := range c.VolumeMounts {
		if readOnly[c.VolumeMounts[i].Name] {
			c.VolumeMounts[i].ReadOnly = true
		}
	}
	slices.SortFunc(c.VolumeMounts, func(a, b corev1.VolumeMount) int { return cmp.Compare(a.MountPath, b.MountPath) })
	slices.SortFunc(c.Ports, func(a, b corev1.ContainerPort) int {
		return cmp.Or(cmp.Compare(a.ContainerPort, b.ContainerPort), cmp.Compare(a.Protocol, b.Protocol))
	})
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
}

// defaultProbe fills the counts the API server defaults in a probe (a
// number left 0 would otherwise compare unequal to the defaulted one).
func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	for _, f := range []struct {
		v   *int32
		def int32
	}{{&p.TimeoutSeconds, 1}, {&p.PeriodSeconds, 10}, {&p.SuccessThreshold, 1}, {&p.FailureThreshold, 3}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
}

// envRefersToEnv reports a value built from another variable ($(NAME)):
// then the order of the variables matters.
func envRefersToEnv(env []corev1.EnvVar) bool {
	for _, e := range env {
		if strings.Contains(e.Value, "$(") {
			return true
		}
	}
	return false
}
