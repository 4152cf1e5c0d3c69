// Package ngmonitoring builds the objects of a TidbNGMonitoring (spec
// §3.4): the headless Service and StatefulSet <name>-ng-monitoring on port
// 12020, and the ConfigMap of the same name holding ng-monitoring's TOML
// config (the user's spec.ngMonitoring.config under the keys the operator
// must set: listen address, the cluster's PD endpoints, data directory and
// TLS files) and its start script. The builders are pure: the sync is the
// controller's (pkg/controller/tidbngmonitoring).
package ngmonitoring

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Names, port and paths of a TidbNGMonitoring's objects.
const (
	// Component is the app.kubernetes.io/component label value and the
	// main container's name.
	Component = "ng-monitoring"
	// Name is the app.kubernetes.io/name label value.
	Name = "tidb-ng-monitoring"
	// Port is the port ng-monitoring serves on.
	Port int32 = 12020
	// DefaultBaseImage is the image without tag when baseImage is empty.
	DefaultBaseImage = "pingcap/ng-monitoring"
	// DataVolume is the data volume (claim template, or an emptyDir without
	// requests.storage), mounted at DataDir.
	DataVolume = "ngmonitoring"
	DataDir    = "/var/lib/ng-monitoring"
	// ConfigDir holds ConfigFile, the rendered config.
	ConfigDir  = "/etc/ng-monitoring"
	ConfigFile = "config.toml"
	// ScriptFile is the start script under /usr/local/bin.
	ScriptFile = "ng_monitoring_start_script.sh"
	// TLSDir holds the cluster client certificate (Secret
	// <tc>-cluster-client-secret) when the cluster has tlsCluster.enabled.
	TLSDir = "/var/lib/ng-monitoring-tls"
)

// ObjectName returns "<name>-ng-monitoring", the name of the StatefulSet,
// the headless Service and the ConfigMap.
func ObjectName(name string) string { return name + "-" + Component }

// PodLabels are the labels of the pods and the selector of the objects:
// name tidb-ng-monitoring, component ng-monitoring, instance the
// TidbNGMonitoring's name, managed by the operator.
func PodLabels(tngm *v1alpha1.TidbNGMonitoring) map[string]string {
	return label.Label{label.NameLabelKey: Name, label.ManagedByLabelKey: label.TiDBOperator}.
		Instance(tngm.Name).Component(Component).Labels()
}

// ClusterRef returns the monitored TidbCluster (clusters[0]), its
// namespace defaulted to tngm's; ok is false when clusters is empty.
func ClusterRef(tngm *v1alpha1.TidbNGMonitoring) (ref v1alpha1.TidbClusterRef, ok bool) {
	if len(tngm.Spec.Clusters) == 0 {
		return ref, false
	}
	ref = tngm.Spec.Clusters[0]
	if ref.Namespace == "" {
		ref.Namespace = tngm.Namespace
	}
	return ref, true
}

// NewService builds the headless Service <name>-ng-monitoring.
func NewService(tngm *v1alpha1.TidbNGMonitoring) *corev1.Service {
	return component.NewStandaloneHeadlessService(tngm.Namespace, ObjectName(tngm.Name), PodLabels(tngm),
		component.Port(Component, Port))
}

// NewConfigMap builds the ConfigMap <name>-ng-monitoring: config-file (the
// rendered TOML) and startup-script. It fails when the user's config sets
// one of the operator's keys to a table (or a table to a value).
func NewConfigMap(tngm *v1alpha1.TidbNGMonitoring, tc *v1alpha1.TidbCluster) (*corev1.ConfigMap, error) {
	cfg, err := component.RenderConfig(tngm.Spec.NGMonitoring.Config, forcedConfig(tngm, tc))
	if err != nil {
		return nil, fmt.Errorf("ng-monitoring %s/%s config: %w", tngm.Namespace, tngm.Name, err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ObjectName(tngm.Name), Namespace: tngm.Namespace, Labels: PodLabels(tngm)},
		Data:       map[string]string{component.ConfigFileKey: cfg, component.StartScriptKey: StartScript(tngm)},
	}, nil
}

// forcedConfig are the keys the operator sets over the user's config.
func forcedConfig(tngm *v1alpha1.TidbNGMonitoring, tc *v1alpha1.TidbCluster) map[string]any {
	ref, _ := ClusterRef(tngm)
	listen := "0.0.0.0"
	if tngm.Spec.PreferIPv6 {
		listen = "[::]"
	}
	pd := names.ServiceHost(names.Member(ref.Name, names.PD), ref.Namespace, ref.ClusterDomain)
	forced := map[string]any{
		"address":      fmt.Sprintf("%s:%d", listen, Port),
		"pd.endpoints": []any{pd + ":2379"},
		"storage.path": DataDir,
	}
	if clusterTLS(tc) {
		forced["security.ca-path"] = TLSDir + "/ca.crt"
		forced["security.cert-path"] = TLSDir + "/tls.crt"
		forced["security.key-path"] = TLSDir + "/tls.key"
	}
	return forced
}

// StartScript starts ng-monitoring with the rendered config, advertising
// the pod's address behind the headless Service (which is how it registers
// itself in PD for TiDB Dashboard) and the retention period when set.
func StartScript(tngm *v1alpha1.TidbNGMonitoring) string {
	domain := ".svc"
	if tngm.Spec.ClusterDomain != "" {
		domain += "." + tngm.Spec.ClusterDomain
	}
	script := "#!/bin/sh\nset -e\nPOD_NAME=${POD_NAME:-$HOSTNAME}\n" +
		"exec /ng-monitoring-server \\\n" +
		"  --config " + ConfigDir + "/" + ConfigFile + " \\\n" +
		fmt.Sprintf("  --advertise-address ${POD_NAME}.%s.${NAMESPACE}%s:%d", ObjectName(tngm.Name), domain, Port)
	if p := tngm.Spec.NGMonitoring.RetentionPeriod; p != "" {
		script += " \\\n  --retention-period " + p
	}
	return script + "\n"
}

// NewStatefulSet builds the StatefulSet (one replica) mounting cm, the
// ConfigMap NewConfigMap built. Its pod template carries the config's hash
// under RollingUpdate (configUpdateStrategy), so a config change rolls the
// pod; under InPlace the mounted file changes without a restart. It fails
// on an unreadable storage size.
func NewStatefulSet(tngm *v1alpha1.TidbNGMonitoring, tc *v1alpha1.TidbCluster, configHash string) (*appsv1.StatefulSet, error) {
	ngm := &tngm.Spec.NGMonitoring
	base := ngm.BaseImage
	if base == "" {
		base = DefaultBaseImage
	}
	acc := defaulting.NewStandaloneAccessor(Component, &tngm.Spec.ComponentSpec, &ngm.ComponentSpec, base)
	spec := component.PodSpec{
		Component:   Component,
		ServiceName: ObjectName(tngm.Name),
		ConfigMap:   ObjectName(tngm.Name), ConfigDir: ConfigDir, ConfigFile: ConfigFile, ScriptFile: ScriptFile,
		DataVolume:     DataVolume,
		DataDir:        DataDir,
		DataSize:       component.StorageRequest(ngm.ResourceRequirements),
		StorageClass:   ngm.StorageClassName,
		StorageVolumes: ngm.StorageVolumes,
		Main: corev1.Container{
			Name:    Component,
			Command: []string{"/bin/sh", component.ScriptMountPath + "/" + ScriptFile},
			Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Ports:          []corev1.ContainerPort{{Name: Component, ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
			Resources:      component.ContainerResources(ngm.ResourceRequirements),
			ReadinessProbe: component.TCPReadiness(Port, 10),
		},
	}
	if spec.DataSize == nil {
		spec.ExtraVolumes = append(spec.ExtraVolumes, corev1.Volume{Name: DataVolume,
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	if clusterTLS(tc) {
		spec.ExtraVolumes = append(spec.ExtraVolumes, component.TLSVolume("ng-monitoring-tls", names.ClusterClientSecret(tc.Name)))
		spec.Main.VolumeMounts = append(spec.Main.VolumeMounts,
			corev1.VolumeMount{Name: "ng-monitoring-tls", MountPath: TLSDir, ReadOnly: true})
	}
	sts, err := component.NewStandaloneStatefulSet(component.Standalone{
		Name: ObjectName(tngm.Name), Namespace: tngm.Namespace, PodLabels: PodLabels(tngm),
	}, acc, spec)
	if err != nil {
		return nil, fmt.Errorf("ng-monitoring %s/%s: %w", tngm.Namespace, tngm.Name, err)
	}
	if acc.ConfigUpdateStrategy() == v1alpha1.ConfigUpdateStrategyRollingUpdate && configHash != "" {
		sts.Spec.Template.Annotations[AnnConfigHash] = configHash
	}
	one := int32(1)
	sts.Spec.Replicas = &one
	return sts, nil
}

// AnnConfigHash is the pod-template annotation carrying the config's hash
// under the RollingUpdate config strategy.
const AnnConfigHash = "tidb.pingcap.com/ng-monitoring-config-hash"

func clusterTLS(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}
