package tidb

import (
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// The customized startup probe (spec.tidb.customizedStartupProbe): an init
// container of the user's image copies the probe binary into an emptyDir
// shared with the tidb container, whose startup probe runs it with the
// user's arguments and timings. Kubernetes holds the readiness probe and
// restarts back until it succeeds, so a TiDB that accepts TCP but cannot
// yet serve SQL does not get traffic.
const (
	startupProbeVolume    = "startup-probe"
	startupProbeDir       = "/var/lib/startup-probe"
	containerStartupProbe = "startup-probe"
)

// startupProbe adds the probe to main and returns the init container and
// the emptyDir volume; nothing without customizedStartupProbe.
func startupProbe(tc *v1alpha1.TidbCluster, main *corev1.Container) (*corev1.Container, []corev1.Volume) {
	p := tc.Spec.TiDB.CustomizedStartupProbe
	if p == nil {
		return nil, nil
	}
	mount := corev1.VolumeMount{Name: startupProbeVolume, MountPath: startupProbeDir}
	binary := path.Join(startupProbeDir, path.Base(p.BinaryName))
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: startupProbeVolume, MountPath: startupProbeDir, ReadOnly: true})
	main.StartupProbe = &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: append([]string{binary}, p.Args...)}},
	}
	setProbeTimings(main.StartupProbe, p)
	init := &corev1.Container{
		Name:         containerStartupProbe,
		Image:        p.Image,
		Command:      []string{"cp", p.BinaryName, startupProbeDir + "/"},
		VolumeMounts: []corev1.VolumeMount{mount},
	}
	vol := corev1.Volume{Name: startupProbeVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	return init, []corev1.Volume{vol}
}

// setProbeTimings copies the timings that are set; the others keep the
// Kubernetes defaults.
func setProbeTimings(probe *corev1.Probe, p *v1alpha1.CustomizedProbe) {
	for _, f := range []struct {
		from *int32
		to   *int32
	}{
		{p.InitialDelaySeconds, &probe.InitialDelaySeconds},
		{p.TimeoutSeconds, &probe.TimeoutSeconds},
		{p.PeriodSeconds, &probe.PeriodSeconds},
		{p.SuccessThreshold, &probe.SuccessThreshold},
		{p.FailureThreshold, &probe.FailureThreshold},
	} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
}
