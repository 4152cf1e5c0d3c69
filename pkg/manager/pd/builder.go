package pd

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// PD's ports, paths and file names, as the TiDB Operator lays them out.
const (
	ClientPort = 2379
	PeerPort   = 2380
	pdDataDir  = "/var/lib/pd"
	tlsDir     = "/var/lib/pd-tls"
	tlsVolume  = "pd-tls"
	// clientTLSDir holds <tc>-cluster-client-secret with mountClusterClientSecret.
	clientTLSDir    = "/var/lib/cluster-client-tls"
	clientTLSVolume = "cluster-client-tls"
	configFile      = "pd.toml"
	scriptFile      = "pd_start_script.sh"
	configDir       = "/etc/pd"
	dataVolume      = "pd"
	containerPD     = "pd"
	portClient      = "client"
	portServer      = "server"
	peerPort2380    = "tcp-peer-2380"
	peerPort2379    = "tcp-peer-2379"
)

func tlsEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

// newServices returns the client Service <tc>-pd and the headless <tc>-pd-peer.
func newServices(tc *v1alpha1.TidbCluster) []*corev1.Service {
	var spec *v1alpha1.ServiceSpec
	if tc.Spec.PD != nil {
		spec = tc.Spec.PD.Service
	}
	client := component.ClientService(tc, names.PD, names.Member(tc.Name, names.PD), spec,
		component.Port(portClient, ClientPort))
	peer := component.HeadlessService(tc, names.PD, names.Peer(tc.Name, names.PD),
		component.Port(peerPort2380, PeerPort), component.Port(peerPort2379, ClientPort))
	return []*corev1.Service{client, peer}
}

// newConfigData returns the config file and start script, or nil when the
// spec has no config (the TiDB Operator's rule: clusters without
// spec.pd.config predate operator-managed ConfigMaps).
func newConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	pd := tc.Spec.PD
	if pd.Config == nil {
		return nil, nil
	}
	forced := map[string]any{}
	if tlsEnabled(tc) {
		forced["security.cacert-path"] = tlsDir + "/ca.crt"
		forced["security.cert-path"] = tlsDir + "/tls.crt"
		forced["security.key-path"] = tlsDir + "/tls.key"
	}
	dashboardTLSConfig(tc, forced)
	cfg, err := component.RenderConfig(pd.Config, forced)
	if err != nil {
		return nil, err
	}
	script, err := renderStartScript(tc)
	if err != nil {
		return nil, err
	}
	return map[string]string{component.ConfigFileKey: cfg, component.StartScriptKey: script}, nil
}

// newStatefulSet returns PD's StatefulSet mounting configMap.
func newStatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	pd := tc.Spec.PD
	env := []corev1.EnvVar{
		{Name: "PEER_SERVICE_NAME", Value: names.Peer(tc.Name, names.PD)},
		{Name: "SERVICE_NAME", Value: names.Member(tc.Name, names.PD)},
		{Name: "SET_NAME", Value: names.Member(tc.Name, names.PD)},
	}
	if pd.HostNetwork != nil && *pd.HostNetwork || tc.Spec.HostNetwork != nil && *tc.Spec.HostNetwork {
		env = append(env, corev1.EnvVar{Name: "POD_NAME",
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	}
	main := corev1.Container{
		Name:    containerPD,
		Command: []string{"/bin/sh", component.ScriptMountPath + "/" + scriptFile},
		Ports: []corev1.ContainerPort{
			{Name: portServer, ContainerPort: PeerPort, Protocol: corev1.ProtocolTCP},
			{Name: portClient, ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP},
		},
		Env:       env,
		Resources: component.ContainerResources(pd.ResourceRequirements),
	}
	if pd.ReadinessProbe != nil {
		main.ReadinessProbe = component.TCPReadiness(ClientPort, 0)
	}
	var extra []corev1.Volume
	if tlsEnabled(tc) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: tlsVolume, MountPath: tlsDir, ReadOnly: true})
		extra = append(extra, component.TLSVolume(tlsVolume, names.ClusterSecret(tc.Name, names.PD)))
		// mountClusterClientSecret: the client certificate the operator
		// uses, for tools run inside PD's pods (pd-ctl), as for TiKV.
		if pd.MountClusterClientSecret != nil && *pd.MountClusterClientSecret {
			main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: clientTLSVolume, MountPath: clientTLSDir, ReadOnly: true})
			extra = append(extra, component.TLSVolume(clientTLSVolume, names.ClusterClientSecret(tc.Name)))
		}
	}
	extra = append(extra, dashboardTLSVolume(tc, &main)...)
	return component.NewStatefulSet(tc, component.PodSpec{
		Component:             names.PD,
		ServiceName:           names.Peer(tc.Name, names.PD),
		Main:                  main,
		ConfigMap:             configMap,
		ConfigDir:             configDir,
		ConfigFile:            configFile,
		ScriptFile:            scriptFile,
		DataVolume:            dataVolume,
		DataDir:               pdDataDir,
		DataSize:              component.StorageRequest(pd.ResourceRequirements),
		StorageClass:          pd.StorageClassName,
		VolumeAttributesClass: pd.VolumeAttributesClassName,
		StorageVolumes:        pd.StorageVolumes,
		DefaultMountPath: func(name string) string {
			return "/var/lib/pd-" + name
		},
		ExtraVolumes: extra,
		MetricsPort:  ClientPort,
		SysctlInit:   component.SysctlInitContainer,
	})
}
