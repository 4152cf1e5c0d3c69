// Package dmmaster runs a DMCluster's dm-master on the component skeleton,
// as the TiDB Operator v1.6 lays it out (spec dm.md §3.2): a client Service
// <dc>-dm-master (8261), a headless <dc>-dm-master-peer (8291), a ConfigMap
// with dm-master's TOML and start script, and the StatefulSet
// <dc>-dm-master. Its hooks read members and the leader from dm-master's
// API (pkg/dmapi), move the leader off a pod before it restarts or goes, and
// delete a member before its pod is scaled in. It also holds what dm-master
// and dm-worker share: the labels of DM objects and the pod builder.
package dmmaster

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Ports and paths of dm-master, as the TiDB Operator lays them out.
const (
	// ClientPort serves dm-master's API and metrics; PeerPort its etcd peers.
	ClientPort = 8261
	PeerPort   = 8291
	configDir  = "/etc/dm-master"
	configFile = "dm-master.toml"
	scriptFile = "dm_master_start_script.sh"
	dataDir    = "/var/lib/dm-master"
	tlsDir     = "/var/lib/dm-master-tls"
	tlsVolume  = "dm-master-tls"
	// SourceTLSDir holds one directory per spec.tlsClientSecretNames entry.
	SourceTLSDir = "/var/lib/source-tls"
)

// Labels are the labels of a DM component's objects (its pods' selector):
// app.kubernetes.io/name=dm-cluster, managed-by=tidb-operator,
// instance=<dc>, component=<component>.
func Labels(dc *v1alpha1.DMCluster, component string) map[string]string {
	l := label.New().Instance(dc.Name).Component(component)
	l[label.NameLabelKey] = names.DMClusterLabelName
	return l.Labels()
}

// TLSEnabled reports spec.tlsCluster.enabled.
func TLSEnabled(dc *v1alpha1.DMCluster) bool {
	return dc.Spec.TLSCluster != nil && dc.Spec.TLSCluster.Enabled
}

// TLSConfig returns the TOML keys a DM component's config is forced to when
// TLS is on: its certificate under certDir; nil otherwise.
func TLSConfig(dc *v1alpha1.DMCluster, certDir string) map[string]any {
	if !TLSEnabled(dc) {
		return map[string]any{}
	}
	return map[string]any{"ssl-ca": certDir + "/ca.crt", "ssl-cert": certDir + "/tls.crt", "ssl-key": certDir + "/tls.key"}
}

// newServices returns <dc>-dm-master shaped by spec.master.service and the
// headless <dc>-dm-master-peer.
func newServices(dc *v1alpha1.DMCluster) []*corev1.Service {
	podLabels := Labels(dc, names.DMMasterComponent)
	var spec *v1alpha1.ServiceSpec
	ms := dc.Spec.Master.Service
	if ms != nil {
		spec = &ms.ServiceSpec
	}
	client := component.NewStandaloneService(dc.Namespace, names.DMMaster(dc.Name), podLabels, spec,
		component.Port("dm-master", ClientPort))
	if ms != nil {
		if ms.ExternalTrafficPolicy != nil {
			client.Spec.ExternalTrafficPolicy = *ms.ExternalTrafficPolicy
		}
		nodePorts := client.Spec.Type == corev1.ServiceTypeNodePort || client.Spec.Type == corev1.ServiceTypeLoadBalancer
		if ms.MasterNodePort != nil && nodePorts {
			client.Spec.Ports[0].NodePort = int32(*ms.MasterNodePort) //nolint:gosec // a port number
		}
	}
	peer := component.NewStandaloneHeadlessService(dc.Namespace, names.DMMasterPeer(dc.Name), podLabels,
		component.Port("dm-master-peer", PeerPort))
	return []*corev1.Service{client, peer}
}

// newConfigData returns config-file (spec.master.config as TOML, with the
// TLS keys) and startup-script.
func newConfigData(dc *v1alpha1.DMCluster) (map[string]string, error) {
	return ConfigData(dc.Spec.Master.Config, TLSConfig(dc, tlsDir), newStartScript(dc))
}

// ConfigData renders a DM component's ConfigMap data from its config, the
// forced keys and its start script. It errors when the config cannot be
// rendered as TOML.
func ConfigData(cfg *v1alpha1.Config, forced map[string]any, script string) (map[string]string, error) {
	if cfg == nil {
		cfg = &v1alpha1.Config{}
	}
	file, err := component.RenderConfig(cfg, forced)
	if err != nil {
		return nil, err
	}
	return map[string]string{component.ConfigFileKey: file, component.StartScriptKey: script}, nil
}

// Pod is what a DM component's StatefulSet is built from beyond its
// accessor: its name, headless Service, main container (name, command,
// ports, its own env), ConfigMap and file names, data volume and size,
// storage classes, TLS volume and metrics port.
type Pod struct {
	Component                        string
	Main                             corev1.Container
	ConfigMap, ConfigDir, ConfigFile string
	ScriptFile, DataDir, StorageSize string
	StorageClass, AttributesClass    *string
	TLSVolume, TLSDir, TLSSecret     string
	MetricsPort                      int32
}

// NewStatefulSet builds a DM component's StatefulSet <dc>-<component> with
// the skeleton's pod builder: the pod fields through the DM accessor, the
// downward-API annotations, config, script and data volume (claim template
// named after the component), the TLS secret when spec.tlsCluster.enabled
// and each spec.tlsClientSecretNames entry under /var/lib/source-tls. It
// is pure and errors on an unreadable storageSize.
func NewStatefulSet(dc *v1alpha1.DMCluster, p Pod) (*appsv1.StatefulSet, error) {
	size, err := resource.ParseQuantity(p.StorageSize)
	if err != nil {
		return nil, fmt.Errorf("%s storageSize %q: %w", p.Component, p.StorageSize, err)
	}
	acc := defaulting.NewDMAccessor(dc, defaulting.Component(p.Component))
	main := p.Main
	if acc.HostNetwork() {
		main.Env = append(main.Env, corev1.EnvVar{Name: "POD_NAME",
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	}
	var extra []corev1.Volume
	if TLSEnabled(dc) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: p.TLSVolume, MountPath: p.TLSDir, ReadOnly: true})
		extra = append(extra, component.TLSVolume(p.TLSVolume, p.TLSSecret))
	}
	for _, s := range dc.Spec.TLSClientSecretNames {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: s, MountPath: SourceTLSDir + "/" + s, ReadOnly: true})
		extra = append(extra, component.TLSVolume(s, s))
	}
	podLabels := Labels(dc, p.Component)
	w := component.Standalone{Name: names.Member(dc.Name, p.Component), Namespace: dc.Namespace,
		PodLabels: podLabels, Timezone: dc.Spec.Timezone}
	return component.NewStandaloneStatefulSet(w, acc, component.PodSpec{
		Component:             p.Component,
		ServiceName:           names.Member(dc.Name, p.Component) + "-peer",
		Main:                  main,
		ConfigMap:             p.ConfigMap,
		ConfigDir:             p.ConfigDir,
		ConfigFile:            p.ConfigFile,
		ScriptFile:            p.ScriptFile,
		DataVolume:            p.Component,
		DataDir:               p.DataDir,
		DataSize:              &size,
		StorageClass:          p.StorageClass,
		VolumeAttributesClass: p.AttributesClass,
		ExtraVolumes:          extra,
		MetricsPort:           p.MetricsPort,
	})
}

// newStatefulSet returns <dc>-dm-master mounting configMap.
func newStatefulSet(dc *v1alpha1.DMCluster, configMap string) (*appsv1.StatefulSet, error) {
	ms := &dc.Spec.Master
	main := corev1.Container{
		Name:    names.DMMasterComponent,
		Command: []string{"/bin/sh", component.ScriptMountPath + "/" + scriptFile},
		Ports: []corev1.ContainerPort{
			{Name: "peer", ContainerPort: PeerPort, Protocol: corev1.ProtocolTCP},
			{Name: "client", ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			{Name: "PEER_SERVICE_NAME", Value: names.DMMasterPeer(dc.Name)},
			{Name: "SERVICE_NAME", Value: names.DMMaster(dc.Name)},
			{Name: "SET_NAME", Value: names.DMMaster(dc.Name)},
		},
		Resources: component.ContainerResources(ms.ResourceRequirements),
	}
	return NewStatefulSet(dc, Pod{
		Component: names.DMMasterComponent, Main: main,
		ConfigMap: configMap, ConfigDir: configDir, ConfigFile: configFile, ScriptFile: scriptFile,
		DataDir: dataDir, StorageSize: ms.StorageSize,
		StorageClass: ms.StorageClassName, AttributesClass: ms.VolumeAttributesClassName,
		TLSVolume: tlsVolume, TLSDir: tlsDir, TLSSecret: names.DMClusterSecret(dc.Name, names.DMMasterComponent),
		MetricsPort: ClientPort,
	})
}
