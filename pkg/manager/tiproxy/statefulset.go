package tiproxy

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// newStatefulSet returns TiProxy's StatefulSet mounting configMap ("" means
// the InPlace name <tc>-tiproxy, since TiProxy always has a ConfigMap).
// TiProxy keeps no data: it has a volume claim template only per storage
// volume. Replicas and partition are left for the skeleton.
func newStatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	if configMap == "" {
		configMap = names.Member(tc.Name, names.TiProxy)
	}
	main := mainContainer(tc)
	tls := tlsVolumes(tc, &main)
	sts, err := component.NewStatefulSet(tc, component.PodSpec{
		Component:             names.TiProxy,
		ServiceName:           names.Peer(tc.Name, names.TiProxy),
		Main:                  main,
		StorageVolumes:        tc.Spec.TiProxy.StorageVolumes,
		StorageClass:          tc.Spec.TiProxy.StorageClassName,
		VolumeAttributesClass: tc.Spec.TiProxy.VolumeAttributesClassName,
		DefaultMountPath:      defaultMountPath,
		ExtraVolumes:          append([]corev1.Volume{configVolume(configMap)}, tls...),
		MetricsPort:           StatusPort,
	})
	if err != nil {
		return nil, err
	}
	// TiProxy serves its metrics on the API port under /api.
	sts.Spec.Template.Annotations[label.AnnPrometheusPath] = metricsPath
	return sts, nil
}

// defaultMountPath is where a storage volume without a mountPath is
// mounted: under TiProxy's own directory, whose work directory a volume
// named "work" makes persistent, and apart from the certificates'.
func defaultMountPath(name string) string { return "/var/lib/tiproxy/" + name }

// mainContainer returns the tiproxy container without its TLS mounts: the
// start script from the config volume, the SQL, API and peer ports, the
// pod's name and peer Service for the advertised address.
func mainContainer(tc *v1alpha1.TidbCluster) corev1.Container {
	p := tc.Spec.TiProxy
	return corev1.Container{
		Name:    containerName,
		Command: []string{"/bin/sh", configDir + "/" + scriptFile},
		Ports: []corev1.ContainerPort{
			{Name: portServer, ContainerPort: ServerPort, Protocol: corev1.ProtocolTCP},
			{Name: portAPI, ContainerPort: StatusPort, Protocol: corev1.ProtocolTCP},
			{Name: portPeer, ContainerPort: PeerPort, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "HEADLESS_SERVICE_NAME", Value: names.Peer(tc.Name, names.TiProxy)},
		},
		VolumeMounts:   []corev1.VolumeMount{{Name: component.ConfigVolumeName, MountPath: configDir, ReadOnly: true}},
		ReadinessProbe: readinessProbe(tc),
		Resources:      component.ContainerResources(p.ResourceRequirements),
	}
}

// configVolume mounts the config file and the start script side by side
// under /etc/proxy, as the TiDB Operator does; the pod volume is named like
// every component's config volume, where the skeleton finds the ConfigMap
// in use.
func configVolume(configMap string) corev1.Volume {
	return corev1.Volume{Name: component.ConfigVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
		Items: []corev1.KeyToPath{
			{Key: component.ConfigFileKey, Path: configFile},
			{Key: component.StartScriptKey, Path: scriptFile},
		},
	}}}
}

// readinessProbe asks TiProxy's own health (/api/debug/health on the API
// port, over HTTPS when the API serves TLS), which turns false the moment
// the proxy begins shutting down, so the client Service stops sending it
// new connections while it drains the ones it has. The TiDB Operator sets
// no probe. readinessProbe.type=tcp checks the SQL port instead; its
// initialDelaySeconds and periodSeconds apply to either.
func readinessProbe(tc *v1alpha1.TidbCluster) *corev1.Probe {
	scheme := corev1.URISchemeHTTP
	if tlsCluster(tc) {
		scheme = corev1.URISchemeHTTPS
	}
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/api/debug/health", Port: intstr.FromInt32(StatusPort), Scheme: scheme,
	}}}
	spec := tc.Spec.TiProxy.ReadinessProbe
	if spec == nil {
		return p
	}
	if spec.Type != nil && *spec.Type == "tcp" {
		p.ProbeHandler = corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ServerPort)}}
	}
	if spec.InitialDelaySeconds != nil {
		p.InitialDelaySeconds = *spec.InitialDelaySeconds
	}
	if spec.PeriodSeconds != nil {
		p.PeriodSeconds = *spec.PeriodSeconds
	}
	return p
}

// tlsVolumes mounts the certificates of the layout into main (read-only)
// and returns their pod volumes; the config names the same directories
// (setTLSLegacy, setTLSV1).
func tlsVolumes(tc *v1alpha1.TidbCluster, main *corev1.Container) []corev1.Volume {
	var vols []corev1.Volume
	mount := func(volume, secret, dir string) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: dir, ReadOnly: true})
		vols = append(vols, component.TLSVolume(volume, secret))
	}
	if tlsCluster(tc) {
		// The cluster client certificate is TiProxy's client certificate in
		// the legacy layout; the v1 layout mounts it for debugging only.
		mount(clusterClientVolume, names.ClusterClientSecret(tc.Name), clusterClientDir)
		dir := httpServerDir
		if certLayoutV1(tc) {
			dir = clusterDir
		}
		mount(clusterVolume, names.ClusterSecret(tc.Name, names.TiProxy), dir)
	}
	if tlsTiDB(tc) {
		mount(serverVolume, tidbServerSecret(tc), serverDir)
		if sqlTLS(tc) && !certLayoutV1(tc) {
			mount(sqlVolume, sqlClientSecret(tc), sqlDir)
		}
	}
	return vols
}
