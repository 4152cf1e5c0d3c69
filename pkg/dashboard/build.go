// Package dashboard builds the objects of a TidbDashboard (spec §3.4): the
// StatefulSet <name>-tidb-dashboard running TiDB Dashboard against the PD
// of the TidbCluster it serves, and the Service <name>-tidb-dashboard-exposed
// on port 12333. The builders are pure: the sync is the controller's
// (pkg/controller/tidbdashboard).
package dashboard

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Names, port and paths of a TidbDashboard's objects.
const (
	// Component is the app.kubernetes.io/name and component label value and
	// the main container's name.
	Component = "tidb-dashboard"
	// Port is the port TiDB Dashboard serves on.
	Port int32 = 12333
	// DefaultBaseImage is the image without tag when spec.baseImage is empty.
	DefaultBaseImage = "pingcap/tidb-dashboard"
	// DataVolume is the data volume (claim template, or an emptyDir without
	// requests.storage), mounted at DataDir.
	DataVolume = "data"
	DataDir    = "/data"
	// ClusterTLSDir holds the cluster client certificate (Secret
	// <tc>-cluster-client-secret) when the cluster has tlsCluster.enabled.
	ClusterTLSDir = "/var/lib/cluster-client-tls"
	// TiDBTLSDir holds the TiDB client certificate (Secret
	// <tc>-tidb-client-secret) when the cluster has tidb.tlsClient.enabled.
	TiDBTLSDir = "/var/lib/tidb-client-tls"
)

// StatefulSetName returns "<name>-tidb-dashboard".
func StatefulSetName(name string) string { return name + "-" + Component }

// ServiceName returns "<name>-tidb-dashboard-exposed".
func ServiceName(name string) string { return name + "-" + Component + "-exposed" }

// PodLabels are the labels of td's pods and the selector of its objects:
// name and component tidb-dashboard, instance td's name, managed by the
// operator (so the operator's caches see them).
func PodLabels(td *v1alpha1.TidbDashboard) map[string]string {
	return label.Label{label.NameLabelKey: Component, label.ManagedByLabelKey: label.TiDBOperator}.
		Instance(td.Name).Component(Component).Labels()
}

// ClusterRef returns the TidbCluster td serves (clusters[0]), its
// namespace defaulted to td's; ok is false when clusters is empty.
func ClusterRef(td *v1alpha1.TidbDashboard) (ref v1alpha1.TidbClusterRef, ok bool) {
	if len(td.Spec.Clusters) == 0 {
		return ref, false
	}
	ref = td.Spec.Clusters[0]
	if ref.Namespace == "" {
		ref.Namespace = td.Namespace
	}
	return ref, true
}

// NewService builds <name>-tidb-dashboard-exposed from spec.service.
func NewService(td *v1alpha1.TidbDashboard) *corev1.Service {
	return component.NewStandaloneService(td.Namespace, ServiceName(td.Name), PodLabels(td), &td.Spec.Service,
		component.Port(Component, Port))
}

// NewStatefulSet builds td's StatefulSet (one replica) for the cluster tc
// it serves. It fails on an unreadable storage size.
func NewStatefulSet(td *v1alpha1.TidbDashboard, tc *v1alpha1.TidbCluster) (*appsv1.StatefulSet, error) {
	base := td.Spec.BaseImage
	if base == "" {
		base = DefaultBaseImage
	}
	acc := defaulting.NewStandaloneAccessor(Component, nil, &td.Spec.ComponentSpec, base)
	spec := component.PodSpec{
		Component:      Component,
		ServiceName:    ServiceName(td.Name),
		DataVolume:     DataVolume,
		DataDir:        DataDir,
		DataSize:       component.StorageRequest(td.Spec.ResourceRequirements),
		StorageClass:   td.Spec.StorageClassName,
		StorageVolumes: td.Spec.StorageVolumes,
		Main: corev1.Container{
			Name:           Component,
			Args:           Args(td, tc),
			Ports:          []corev1.ContainerPort{{Name: Component, ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
			Resources:      component.ContainerResources(td.Spec.ResourceRequirements),
			ReadinessProbe: component.TCPReadiness(Port, 10),
		},
	}
	if spec.DataSize == nil {
		// Without requests.storage the data lives as long as the pod.
		spec.ExtraVolumes = append(spec.ExtraVolumes, corev1.Volume{Name: DataVolume,
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	spec.ExtraVolumes = append(spec.ExtraVolumes, tlsVolumes(tc)...)
	spec.Main.VolumeMounts = tlsMounts(tc)
	sts, err := component.NewStandaloneStatefulSet(component.Standalone{
		Name: StatefulSetName(td.Name), Namespace: td.Namespace, PodLabels: PodLabels(td),
	}, acc, spec)
	if err != nil {
		return nil, fmt.Errorf("tidb-dashboard %s/%s: %w", td.Namespace, td.Name, err)
	}
	one := int32(1)
	sts.Spec.Replicas = &one
	return sts, nil
}

// Args are TiDB Dashboard's command-line arguments (to the image's
// entrypoint): listen address and port, data directory, the cluster's PD,
// its feature version, TLS files, and the spec's switches.
func Args(td *v1alpha1.TidbDashboard, tc *v1alpha1.TidbCluster) []string {
	ref, _ := ClusterRef(td)
	host := "0.0.0.0"
	switch {
	case boolOf(td.Spec.ListenOnLocalhostOnly):
		host = "127.0.0.1"
	case td.Spec.PreferIPv6:
		host = "::"
	}
	pd := names.ServiceHost(names.Member(ref.Name, names.PD), ref.Namespace, ref.ClusterDomain)
	args := []string{
		"--host=" + host,
		fmt.Sprintf("--port=%d", Port),
		"--data-dir=" + DataDir,
		fmt.Sprintf("--pd=%s://%s:2379", names.Scheme(clusterTLS(tc)), pd),
	}
	if v := strings.TrimPrefix(tc.Spec.Version, "v"); v != "" {
		args = append(args, "--feature-version="+v)
	}
	if clusterTLS(tc) {
		args = append(args, "--cluster-ca="+ClusterTLSDir+"/ca.crt",
			"--cluster-cert="+ClusterTLSDir+"/tls.crt", "--cluster-key="+ClusterTLSDir+"/tls.key")
	}
	if tidbTLS(tc) {
		args = append(args, "--tidb-ca="+TiDBTLSDir+"/ca.crt",
			"--tidb-cert="+TiDBTLSDir+"/tls.crt", "--tidb-key="+TiDBTLSDir+"/tls.key")
	}
	if p := td.Spec.PathPrefix; p != nil && *p != "" {
		args = append(args, "--path-prefix="+*p)
	}
	if boolOf(td.Spec.DisableKeyVisualizer) {
		args = append(args, "--keyviz=false")
	}
	if td.Spec.Experimental != nil {
		args = append(args, fmt.Sprintf("--experimental=%t", *td.Spec.Experimental))
	}
	if td.Spec.Telemetry != nil {
		args = append(args, fmt.Sprintf("--telemetry=%t", *td.Spec.Telemetry))
	}
	return args
}

func clusterTLS(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

func tidbTLS(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TiDB != nil && tc.Spec.TiDB.TLSClient != nil && tc.Spec.TiDB.TLSClient.Enabled
}

func tlsVolumes(tc *v1alpha1.TidbCluster) []corev1.Volume {
	var vols []corev1.Volume
	if clusterTLS(tc) {
		vols = append(vols, component.TLSVolume("cluster-client-tls", names.ClusterClientSecret(tc.Name)))
	}
	if tidbTLS(tc) {
		vols = append(vols, component.TLSVolume("tidb-client-tls", tc.Name+"-tidb-client-secret"))
	}
	return vols
}

func tlsMounts(tc *v1alpha1.TidbCluster) []corev1.VolumeMount {
	var mounts []corev1.VolumeMount
	if clusterTLS(tc) {
		mounts = append(mounts, corev1.VolumeMount{Name: "cluster-client-tls", MountPath: ClusterTLSDir, ReadOnly: true})
	}
	if tidbTLS(tc) {
		mounts = append(mounts, corev1.VolumeMount{Name: "tidb-client-tls", MountPath: TiDBTLSDir, ReadOnly: true})
	}
	return mounts
}

func boolOf(p *bool) bool { return p != nil && *p }
