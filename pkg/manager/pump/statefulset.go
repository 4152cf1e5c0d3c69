package pump

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// newStatefulSet returns Pump's StatefulSet <tc>-pump, governed by the headless Service <tc>-pump:
// the pump container running the start script, its binlog on the volume claim template data at /data,
// pump.toml from configMap at /etc/pump, a TCP readiness probe on 8250 (the TiDB Operator's, always
// set) and the cluster certificate when TLS is on. Replicas and the (plain RollingUpdate) strategy are
// left for the skeleton.
func newStatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	p := tc.Spec.Pump
	main := corev1.Container{
		Name:           containerPump,
		Command:        []string{"/bin/sh", "-c", newStartScript(tc)},
		Ports:          []corev1.ContainerPort{{Name: portName, ContainerPort: pumpapi.Port, Protocol: corev1.ProtocolTCP}},
		Resources:      component.ContainerResources(p.ResourceRequirements),
		ReadinessProbe: component.TCPReadiness(pumpapi.Port, 0),
	}
	acc := defaulting.NewComponentAccessor(tc, defaulting.ComponentPump)
	if acc.HostNetwork() {
		// The node's host name would otherwise be advertised: the pod's name is, as in the TiDB Operator.
		main.Env = append(main.Env, corev1.EnvVar{Name: "HOSTNAME",
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	}
	volumes := mountVolumes(tc, &main, configMap)
	sts, err := component.NewStatefulSet(tc, component.PodSpec{
		Component:             names.Pump,
		ServiceName:           names.Member(tc.Name, names.Pump),
		Main:                  main,
		DataVolume:            DataVolume,
		DataDir:               DataDir,
		DataSize:              component.StorageRequest(p.ResourceRequirements),
		StorageClass:          p.StorageClassName,
		VolumeAttributesClass: p.VolumeAttributesClassName,
		ExtraVolumes:          volumes,
		MetricsPort:           pumpapi.Port,
	})
	if err != nil {
		return nil, err
	}
	// Pump's pods start one after another unless a policy is set, as the TiDB Operator keeps them.
	if p.PodManagementPolicy == "" && tc.Spec.PodManagementPolicy == "" {
		sts.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if p.SetTimeZone == nil || !*p.SetTimeZone {
		dropEnv(sts, "TZ")
	}
	return sts, nil
}

// mountVolumes mounts into main, and returns as pod volumes: the ConfigMap's pump-config as pump.toml
// (in the volume named like every component's, where the skeleton finds the ConfigMap in use; Pump's
// ConfigMap has no start script, so the skeleton's own config mounts are not used) and the cluster
// certificate when TLS is on.
func mountVolumes(tc *v1alpha1.TidbCluster, main *corev1.Container, configMap string) []corev1.Volume {
	var vols []corev1.Volume
	mount := func(dir string, source corev1.Volume) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: source.Name, MountPath: dir, ReadOnly: true})
		vols = append(vols, source)
	}
	if configMap != "" {
		mount(ConfigDir, corev1.Volume{Name: component.ConfigVolumeName,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
				Items:                []corev1.KeyToPath{{Key: ConfigKey, Path: ConfigFile}},
			}}})
	}
	if tlsEnabled(tc) {
		mount(TLSDir, component.TLSVolume(tlsVolume, names.ClusterSecret(tc.Name, names.Pump)))
	}
	return vols
}

// dropEnv removes the variable name the skeleton sets (the first of that name; the user's env comes
// after it) from the pump container: Pump gets TZ only with spec.pump.setTimeZone, as in the TiDB
// Operator (its logs are in UTC otherwise).
func dropEnv(sts *appsv1.StatefulSet, name string) {
	for i := range sts.Spec.Template.Spec.Containers {
		c := &sts.Spec.Template.Spec.Containers[i]
		if c.Name != containerPump {
			continue
		}
		for j, e := range c.Env {
			if e.Name == name {
				c.Env = append(c.Env[:j:j], c.Env[j+1:]...)
				break
			}
		}
	}
}
