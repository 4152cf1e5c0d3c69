// Package tiflash builds TiFlash's objects (the headless Service, the
// ConfigMap of config templates and the StatefulSet) as the TiDB Operator
// lays them out. The builders are pure: they read only the defaulted,
// validated TidbCluster and their arguments.
package tiflash

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// TiFlash's ports, as the TiDB Operator exposes them.
const (
	// FlashPort serves TiFlash's gRPC API (flash.service_addr) to TiDB.
	FlashPort = 3930
	// ProxyPort serves the TiFlash proxy's Raft API to TiKV and PD.
	ProxyPort = 20170
	// MetricsPort serves TiFlash's Prometheus metrics.
	MetricsPort = 8234
	// ProxyStatusPort serves the proxy's status API and metrics.
	ProxyStatusPort = 20292
	// TCPPort is the ClickHouse TCP port of TiFlash before 7.1.
	TCPPort = 9000
	// HTTPPort is the ClickHouse HTTP port of TiFlash before 7.1.
	HTTPPort = 8123
	// InternalPort is the ClickHouse inter-server port (interserver_http_port).
	InternalPort = 9009

	pdClientPort   = 2379
	tidbStatusPort = 10080
	discoveryPort  = 10261
)

const (
	tlsDir           = "/var/lib/tiflash-tls"
	tlsVolume        = "tiflash-tls"
	templateDir      = "/etc/tiflash"
	containerTiFlash = "tiflash"
	containerInit    = "init"
	// containerSysctl sets the pods' sysctls (annotation
	// tidb.pingcap.com/sysctl-init). The TiDB Operator names it "init"
	// like the config renderer, a pair the API server refuses; ours has a
	// name of its own.
	containerSysctl    = "sysctl-init"
	defaultHelperImage = "busybox:1.26.2"
	// startCommand runs TiFlash on the config the init container rendered.
	startCommand = "/tiflash/tiflash server --config-file /data0/config.toml"
)

func tlsEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

// dataVolume names the volume claim template of storage claim i, dataMountPath
// its mount point.
func dataVolume(i int) string    { return "data" + strconv.Itoa(i) }
func dataMountPath(i int) string { return "/" + dataVolume(i) }

// newServices returns the headless <tc>-tiflash-peer; TiFlash has no client
// Service.
func newServices(tc *v1alpha1.TidbCluster) []*corev1.Service {
	return []*corev1.Service{component.HeadlessService(tc, names.TiFlash, names.Peer(tc.Name, names.TiFlash),
		component.Port("tiflash", FlashPort),
		component.Port("proxy", ProxyPort),
		component.Port("metrics", MetricsPort),
		component.Port("proxy-metrics", ProxyStatusPort))}
}

// newStatefulSet returns TiFlash's StatefulSet mounting the config
// templates of configMap ("" means the InPlace name <tc>-tiflash, since
// TiFlash always has a ConfigMap). Replicas and partition are left for the
// skeleton. It fails on a spec validation refuses (no storage claim, a
// claim without size, a log file outside every volume).
func newStatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	tf := tc.Spec.TiFlash
	if len(tf.StorageClaims) == 0 {
		return nil, errors.New("spec.tiflash.storageClaims: TiFlash needs at least one data disk")
	}
	if configMap == "" {
		configMap = names.Member(tc.Name, names.TiFlash)
	}
	claims, err := volumeClaims(tc)
	if err != nil {
		return nil, err
	}
	main, extra := mainContainer(tc)
	acc := defaulting.NewComponentAccessor(tc, defaulting.ComponentTiFlash)
	sidecars, err := logTailers(tc, append(main.VolumeMounts, acc.AdditionalVolumeMounts()...))
	if err != nil {
		return nil, err
	}
	sts, err := component.NewStatefulSet(tc, component.PodSpec{
		Component:    names.TiFlash,
		ServiceName:  names.Peer(tc.Name, names.TiFlash),
		Main:         main,
		Sidecars:     sidecars,
		ExtraVolumes: append([]corev1.Volume{templateVolume(configMap)}, extra...),
		MetricsPort:  MetricsPort,
		SysctlInit:   containerSysctl,
	})
	if err != nil {
		return nil, err
	}
	// The claims are data0..dataN, not the skeleton's single data volume.
	sts.Spec.VolumeClaimTemplates = claims
	pod := &sts.Spec.Template
	// The config renderer runs after the sysctls (as in the TiDB Operator)
	// and before the user's init containers, which find the rendered config.
	pod.Spec.InitContainers = component.AfterSysctlInit(pod.Spec.InitContainers, containerSysctl, initContainer(tc))
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[label.AnnTiFlashProxyPrometheusPort] = strconv.Itoa(ProxyStatusPort)
	return sts, nil
}

// mainContainer returns the tiflash container and the TLS volume it mounts.
func mainContainer(tc *v1alpha1.TidbCluster) (corev1.Container, []corev1.Volume) {
	tf := tc.Spec.TiFlash
	privileged := tf.Privileged != nil && *tf.Privileged
	main := corev1.Container{
		Name:            containerTiFlash,
		Command:         []string{"/bin/sh", "-c", startCommand},
		SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
		Ports: []corev1.ContainerPort{
			containerPort("tiflash", FlashPort),
			containerPort("proxy", ProxyPort),
			containerPort("tcp", TCPPort),
			containerPort("http", HTTPPort),
			containerPort("internal", InternalPort),
			containerPort("metrics", MetricsPort),
		},
		Env: []corev1.EnvVar{
			{Name: "CLUSTER_NAME", Value: tc.Name},
			{Name: "HEADLESS_SERVICE_NAME", Value: names.Peer(tc.Name, names.TiFlash)},
			{Name: "CAPACITY", Value: capacity(tf.Limits)},
		},
		Resources: component.ContainerResources(tf.ResourceRequirements),
	}
	if defaulting.NewComponentAccessor(tc, defaulting.ComponentTiFlash).HostNetwork() {
		main.Env = append(main.Env, podNameEnv())
	}
	for i := range tf.StorageClaims {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: dataVolume(i), MountPath: dataMountPath(i)})
	}
	if !tlsEnabled(tc) {
		return main, nil
	}
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: tlsVolume, MountPath: tlsDir, ReadOnly: true})
	return main, []corev1.Volume{component.TLSVolume(tlsVolume, names.ClusterSecret(tc.Name, names.TiFlash))}
}

func containerPort(name string, port int32) corev1.ContainerPort {
	return corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP}
}

func podNameEnv() corev1.EnvVar {
	return corev1.EnvVar{Name: "POD_NAME",
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}
}

// templateVolume mounts the whole ConfigMap; the pod volume is named like
// every component's config volume, where the skeleton looks for the
// ConfigMap in use.
func templateVolume(configMap string) corev1.Volume {
	return corev1.Volume{Name: component.ConfigVolumeName, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}},
	}}
}

// initContainer renders /data0/config.toml and /data0/proxy.toml from the
// templates for this pod (initScript).
func initContainer(tc *v1alpha1.TidbCluster) corev1.Container {
	image, pull := helperImage(tc)
	c := corev1.Container{
		Name:            containerInit,
		Image:           image,
		ImagePullPolicy: pull,
		Command:         []string{"sh", "-c", initScript(tc)},
		Env:             []corev1.EnvVar{podNameEnv()},
		VolumeMounts: []corev1.VolumeMount{
			{Name: dataVolume(0), MountPath: dataMountPath(0)},
			{Name: component.ConfigVolumeName, MountPath: templateDir, ReadOnly: true},
		},
	}
	if in := tc.Spec.TiFlash.Initializer; in != nil {
		c.Resources = component.ContainerResources(in.ResourceRequirements)
		c.SecurityContext = in.SecurityContext.DeepCopy()
	}
	return c
}

// initScript replaces POD_NUM in both templates with the pod's ordinal (the
// suffix of its name) and writes the results where TiFlash reads them.
// Across Kubernetes clusters it then replaces PD_ADDR with the PD endpoints
// discovery verifies.
func initScript(tc *v1alpha1.TidbCluster) string {
	script := `set -eu
ordinal=${POD_NAME##*-}
case "${ordinal}" in
  ''|*[!0-9]*) echo "pod name ${POD_NAME} has no ordinal" >&2; exit 1 ;;
esac
sed "s/` + PodNumPlaceholder + `/${ordinal}/g" ` + templateDir + `/` + ConfigTemplateKey + ` > /data0/config.toml
sed "s/` + PodNumPlaceholder + `/${ordinal}/g" ` + templateDir + `/` + ProxyTemplateKey + ` > /data0/proxy.toml
`
	if !tc.Spec.AcrossK8s {
		return script
	}
	discovery := fmt.Sprintf("%s.%s.svc%s:%d", names.DiscoveryName(tc.Name), tc.Namespace, domainSuffix(tc.Spec.ClusterDomain), discoveryPort)
	pd := fmt.Sprintf("%s://%s:%d", names.Scheme(tlsEnabled(tc)), names.Member(tc.Name, names.PD), pdClientPort)
	return script + `# Across Kubernetes clusters, discovery answers the PD endpoints to use.
encoded=$(printf '%s' "` + pd + `" | base64 | tr -d '\n')
until pd=$(wget -qO- -T 3 "http://` + discovery + `/verify/${encoded}"); do
  echo "waiting for discovery to verify the PD endpoints"
  sleep 2
done
pd=$(printf '%s' "${pd}" | sed -e 's#https://##g' -e 's#http://##g')
sed -i "s#` + pdAddrPlaceholder + `#${pd}#g" /data0/config.toml /data0/proxy.toml
`
}

// logTailers returns the serverlog, errorlog and clusterlog sidecars, each
// following one of TiFlash's log files from the volume (among mounts) that
// holds it.
func logTailers(tc *v1alpha1.TidbCluster, mounts []corev1.VolumeMount) ([]corev1.Container, error) {
	files, err := logFiles(tc)
	if err != nil {
		return nil, err
	}
	image, pull := helperImage(tc)
	var resources corev1.ResourceRequirements
	var security *corev1.SecurityContext
	if lt := tc.Spec.TiFlash.LogTailer; lt != nil {
		resources = component.ContainerResources(lt.ResourceRequirements)
		security = lt.SecurityContext
	}
	out := make([]corev1.Container, 0, len(files))
	for i, name := range [3]string{"serverlog", "errorlog", "clusterlog"} {
		mount, err := mountHolding(files[i], mounts)
		if err != nil {
			return nil, err
		}
		out = append(out, corev1.Container{
			Name:            name,
			Image:           image,
			ImagePullPolicy: pull,
			Resources:       resources,
			SecurityContext: security.DeepCopy(),
			// The file is an argument, not script text, so no name can inject shell code.
			Command:      []string{"sh", "-c", `touch "$1"; exec tail -n0 -F "$1"`, name, files[i]},
			VolumeMounts: []corev1.VolumeMount{mount},
		})
	}
	return out, nil
}

// mountHolding returns the mount whose directory holds file (the deepest
// one), for a sidecar to see the file where TiFlash writes it.
func mountHolding(file string, mounts []corev1.VolumeMount) (corev1.VolumeMount, error) {
	best, bestLen := -1, 0
	for i, m := range mounts {
		dir := strings.TrimSuffix(m.MountPath, "/")
		if dir != "" && strings.HasPrefix(file, dir+"/") && len(dir) > bestLen {
			best, bestLen = i, len(dir)
		}
	}
	if best < 0 {
		return corev1.VolumeMount{}, fmt.Errorf("TiFlash log file %q is on no data disk (/data<i>) or additional volume mount of TiFlash", file)
	}
	m := mounts[best]
	m.ReadOnly = false // the sidecar creates the file if TiFlash has not yet
	return m, nil
}

// helperImage returns the helper image and its pull policy (the helper's,
// else the cluster's).
func helperImage(tc *v1alpha1.TidbCluster) (string, corev1.PullPolicy) {
	image, pull := defaultHelperImage, tc.Spec.ImagePullPolicy
	if h := tc.Spec.Helper; h != nil {
		if h.Image != nil && *h.Image != "" {
			image = *h.Image
		}
		if h.ImagePullPolicy != nil {
			pull = *h.ImagePullPolicy
		}
	}
	return image, pull
}

// volumeClaims returns data0..dataN, one per storage claim: its size and
// storage class, labelled like the pods so that the operator finds the PVCs.
func volumeClaims(tc *v1alpha1.TidbCluster) ([]corev1.PersistentVolumeClaim, error) {
	podLabels := component.Labels(tc, names.TiFlash)
	out := make([]corev1.PersistentVolumeClaim, 0, len(tc.Spec.TiFlash.StorageClaims))
	for i, c := range tc.Spec.TiFlash.StorageClaims {
		size, ok := c.Resources.Requests[corev1.ResourceStorage]
		if !ok {
			return nil, fmt.Errorf("spec.tiflash.storageClaims[%d]: resources.requests.storage is required", i)
		}
		out = append(out, corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: dataVolume(i), Labels: podLabels},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName:          c.StorageClassName,
				VolumeAttributesClassName: c.VolumeAttributesClassName,
				Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			},
		})
	}
	return out, nil
}

// capacity renders limits.storage as the CAPACITY the TiDB Operator gives
// TiFlash (as TiKV's --capacity): "<n>GB" for a whole number of GiB, else
// "<n>MB" (MiB, rounded down), and "0" (unlimited) when unset.
func capacity(limits corev1.ResourceList) string {
	q, ok := limits[corev1.ResourceStorage]
	if !ok {
		return "0"
	}
	n := q.Value() // bytes, rounded up
	const mib, gib = 1 << 20, 1 << 30
	if n%gib == 0 {
		return fmt.Sprintf("%dGB", n/gib)
	}
	return fmt.Sprintf("%dMB", n/mib)
}
