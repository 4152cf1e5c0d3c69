package ticdc

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// newStatefulSet returns TiCDC's StatefulSet, mounting ticdc.toml from configMap when it is not "".
// TiCDC keeps no data: its only volume claims are spec.ticdc.storageVolumes. Replicas and partition
// are left for the skeleton.
func newStatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	cdc := tc.Spec.TiCDC
	main := corev1.Container{
		Name:    containerTiCDC,
		Command: []string{"/bin/sh", "-c", newStartScript(tc)},
		Ports:   []corev1.ContainerPort{{Name: portName, ContainerPort: ticdcapi.Port, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "HEADLESS_SERVICE_NAME", Value: names.Peer(tc.Name, names.TiCDC)},
		},
		Resources: component.ContainerResources(cdc.ResourceRequirements),
	}
	volumes := mountVolumes(tc, &main, configMap)
	sts, err := component.NewStatefulSet(tc, component.PodSpec{
		Component:             names.TiCDC,
		ServiceName:           names.Peer(tc.Name, names.TiCDC),
		Main:                  main,
		StorageClass:          cdc.StorageClassName,
		VolumeAttributesClass: cdc.VolumeAttributesClassName,
		StorageVolumes:        cdc.StorageVolumes,
		DefaultMountPath:      defaultMountPath,
		ExtraVolumes:          volumes,
		MetricsPort:           ticdcapi.Port,
	})
	if err != nil {
		return nil, err
	}
	setTimezone(sts, timezone(tc))
	return sts, nil
}

func defaultMountPath(name string) string { return "/var/lib/ticdc-" + name }

// mountVolumes mounts into main, and returns as pod volumes: the cluster certificate and the
// operator's client certificate when TLS is on, one directory per sink TLS Secret, and the ConfigMap's
// config-file as ticdc.toml. The config volume is named like every component's, where the skeleton
// finds the ConfigMap in use; TiCDC's ConfigMap has no start script, so the skeleton's own config
// mounts are not used.
func mountVolumes(tc *v1alpha1.TidbCluster, main *corev1.Container, configMap string) []corev1.Volume {
	var vols []corev1.Volume
	mount := func(volume, dir string, source corev1.Volume) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: dir, ReadOnly: true})
		vols = append(vols, source)
	}
	if tlsEnabled(tc) {
		mount(tlsVolume, TLSDir, component.TLSVolume(tlsVolume, names.ClusterSecret(tc.Name, names.TiCDC)))
		mount(clientTLSVolume, ClientTLSDir, component.TLSVolume(clientTLSVolume, names.ClusterClientSecret(tc.Name)))
	}
	for _, secret := range tc.Spec.TiCDC.TLSClientSecretNames {
		mount(secret, SinkTLSDir+"/"+secret, component.TLSVolume(secret, secret))
	}
	if configMap != "" {
		mount(component.ConfigVolumeName, ConfigDir, corev1.Volume{Name: component.ConfigVolumeName,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
				Items:                []corev1.KeyToPath{{Key: component.ConfigFileKey, Path: ConfigFile}},
			}}})
	}
	return vols
}

// setTimezone sets TZ in the ticdc container to tz: the skeleton sets the cluster's, and TiCDC's own
// tz setting wins over it, as in the TiDB Operator.
func setTimezone(sts *appsv1.StatefulSet, tz string) {
	for i := range sts.Spec.Template.Spec.Containers {
		c := &sts.Spec.Template.Spec.Containers[i]
		if c.Name != containerTiCDC {
			continue
		}
		for j := range c.Env {
			if c.Env[j].Name == "TZ" {
				c.Env[j].Value = tz
				return
			}
		}
	}
}
