package tikv

import (
	"fmt"
	"maps"
	"path"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// TiKV's ports, paths and file names, as the TiDB Operator lays them out.
const (
	// ServerPort serves TiKV's gRPC API to PD, TiDB and the other stores.
	ServerPort = 20160
	// StatusPort serves TiKV's status API and Prometheus metrics.
	StatusPort = 20180

	dataDirRoot         = "/var/lib/tikv"
	tlsDir              = "/var/lib/tikv-tls"
	tlsVolume           = "tikv-tls"
	clientTLSDir        = "/var/lib/cluster-client-tls"
	clientTLSVolume     = "cluster-client-tls"
	configDir           = "/etc/tikv"
	configFile          = "tikv.toml"
	scriptFile          = "tikv_start_script.sh"
	dataVolume          = "tikv"
	containerTiKV       = "tikv"
	containerRocksDBLog = "rocksdblog"
	containerRaftLog    = "raftlog"
	portPeer            = "peer"
	portServer          = "server"
	portStatus          = "status"
	defaultHelperImage  = "busybox:1.26.2"
)

func tlsEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

// newServices returns the headless <tc>-tikv-peer; TiKV has no client Service.
func newServices(tc *v1alpha1.TidbCluster) []*corev1.Service {
	return []*corev1.Service{component.HeadlessService(tc, names.TiKV, names.Peer(tc.Name, names.TiKV),
		component.Port(portPeer, ServerPort))}
}

// newConfigData returns the config file and start script, or nil when the
// spec has no config (clusters without spec.tikv.config predate
// operator-managed ConfigMaps, as for PD) and no PiTR restore holds the
// cluster; while one does, the config carries its overlay (overlay.go).
func newConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	kv := tc.Spec.TiKV
	if kv.Config == nil && !pitrOverlay(tc) {
		return nil, nil
	}
	forced := numericStringKeys(kv.Config)
	maps.Copy(forced, overlayKeys(tc))
	if tlsEnabled(tc) {
		forced["security.ca-path"] = tlsDir + "/ca.crt"
		forced["security.cert-path"] = tlsDir + "/tls.crt"
		forced["security.key-path"] = tlsDir + "/tls.key"
	}
	cfg, err := component.RenderConfig(kv.Config, forced)
	if err != nil {
		return nil, err
	}
	script, err := startScripts.Render(tc)
	if err != nil {
		return nil, err
	}
	return map[string]string{component.ConfigFileKey: cfg, component.StartScriptKey: script}, nil
}

// numericStringKeys returns, as integers, the two pessimistic-txn durations
// the user wrote as numeric strings: TiKV before 4.0 reads them as numbers,
// later versions accept both, so the TiDB Operator renders them unquoted.
func numericStringKeys(cfg *v1alpha1.Config) map[string]any {
	out := map[string]any{}
	if cfg == nil {
		return out
	}
	txn, ok := cfg.Items["pessimistic-txn"].(map[string]any)
	if !ok {
		return out
	}
	for _, key := range []string{"wait-for-lock-timeout", "wake-up-delay-duration"} {
		s, ok := txn[key].(string)
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			out["pessimistic-txn."+key] = n
		}
	}
	return out
}

// newStatefulSet returns TiKV's StatefulSet mounting configMap, its pod
// template marked while a PiTR restore's overlay is on (markOverlay).
func newStatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	kv := tc.Spec.TiKV
	main, extra := mainContainer(tc)
	sidecars, err := logTailers(tc)
	if err != nil {
		return nil, err
	}
	sts, err := component.NewStatefulSet(tc, component.PodSpec{
		Component:             names.TiKV,
		ServiceName:           names.Peer(tc.Name, names.TiKV),
		Main:                  main,
		Sidecars:              sidecars,
		ConfigMap:             configMap,
		ConfigDir:             configDir,
		ConfigFile:            configFile,
		ScriptFile:            scriptFile,
		DataVolume:            dataVolume,
		DataDir:               dataDirRoot,
		DataSize:              component.StorageRequest(kv.ResourceRequirements),
		StorageClass:          kv.StorageClassName,
		VolumeAttributesClass: kv.VolumeAttributesClassName,
		StorageVolumes:        kv.StorageVolumes,
		DefaultMountPath:      defaultMountPath,
		ExtraVolumes:          extra,
		MetricsPort:           StatusPort,
		SysctlInit:            component.SysctlInitContainer,
	})
	if err != nil {
		return nil, err
	}
	markOverlay(tc, sts)
	return sts, nil
}

func defaultMountPath(name string) string { return "/var/lib/tikv-" + name }

// mainContainer returns the tikv container and the TLS volumes it mounts.
func mainContainer(tc *v1alpha1.TidbCluster) (corev1.Container, []corev1.Volume) {
	kv := tc.Spec.TiKV
	privileged := kv.Privileged != nil && *kv.Privileged
	main := corev1.Container{
		Name:            containerTiKV,
		Command:         []string{"/bin/sh", component.ScriptMountPath + "/" + scriptFile},
		SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
		Ports:           []corev1.ContainerPort{{Name: portServer, ContainerPort: ServerPort, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: "CLUSTER_NAME", Value: tc.Name},
			{Name: "HEADLESS_SERVICE_NAME", Value: names.Peer(tc.Name, names.TiKV)},
			{Name: "CAPACITY", Value: Capacity(kv.Limits)},
		},
		Resources: component.ContainerResources(kv.ResourceRequirements),
	}
	if kv.EnableNamedStatusPort {
		main.Ports = append(main.Ports, corev1.ContainerPort{Name: portStatus, ContainerPort: StatusPort, Protocol: corev1.ProtocolTCP})
	}
	if defaulting.NewComponentAccessor(tc, defaulting.ComponentTiKV).HostNetwork() {
		main.Env = append(main.Env, corev1.EnvVar{Name: "POD_NAME",
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	}
	if p := kv.ReadinessProbe; p != nil {
		main.ReadinessProbe = component.TCPReadiness(ServerPort, 0)
		if p.InitialDelaySeconds != nil {
			main.ReadinessProbe.InitialDelaySeconds = *p.InitialDelaySeconds
		}
		if p.PeriodSeconds != nil {
			main.ReadinessProbe.PeriodSeconds = *p.PeriodSeconds
		}
	}
	var extra []corev1.Volume
	if tlsEnabled(tc) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: tlsVolume, MountPath: tlsDir, ReadOnly: true})
		extra = append(extra, component.TLSVolume(tlsVolume, names.ClusterSecret(tc.Name, names.TiKV)))
		if kv.MountClusterClientSecret != nil && *kv.MountClusterClientSecret {
			main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: clientTLSVolume, MountPath: clientTLSDir, ReadOnly: true})
			extra = append(extra, component.TLSVolume(clientTLSVolume, names.ClusterClientSecret(tc.Name)))
		}
	}
	return main, extra
}

// Capacity renders limits.storage as TiKV's --capacity: "<n>GB" when it is
// a whole number of GiB, else "<n>MB" (MiB, rounded down), and "0"
// (unlimited) when unset.
func Capacity(limits corev1.ResourceList) string {
	q, ok := limits[corev1.ResourceStorage]
	if !ok {
		return "0"
	}
	n := q.Value() // bytes, rounded up; fractional quantities such as 1.5Gi are fine
	const mib, gib = 1 << 20, 1 << 30
	if n%gib == 0 {
		return fmt.Sprintf("%dGB", n/gib)
	}
	return fmt.Sprintf("%dMB", n/mib)
}

// logTailers returns the rocksdblog and raftlog sidecars the spec asks for:
// each tails its log file to stdout from the volume TiKV writes it to.
func logTailers(tc *v1alpha1.TidbCluster) ([]corev1.Container, error) {
	kv := tc.Spec.TiKV
	old := before50(defaulting.NewComponentAccessor(tc, defaulting.ComponentTiKV).Version())
	var out []corev1.Container
	if kv.SeparateRocksDBLog != nil && *kv.SeparateRocksDBLog {
		file := "rocksdb.info"
		if old {
			file = "db/LOG"
		}
		c, err := logTailer(tc, containerRocksDBLog, kv.RocksDBLogVolumeName, file)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if kv.SeparateRaftLog != nil && *kv.SeparateRaftLog {
		file := "raftdb.info"
		if old {
			file = "raft/LOG"
		}
		c, err := logTailer(tc, containerRaftLog, kv.RaftLogVolumeName, file)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// logTailer returns a helper container tailing file in the data volume, or
// in the storage or additional volume named volume when set.
func logTailer(tc *v1alpha1.TidbCluster, name, volume, file string) (corev1.Container, error) {
	mount, err := logVolumeMount(tc.Spec.TiKV, volume)
	if err != nil {
		return corev1.Container{}, err
	}
	logFile := path.Join(mount.MountPath, file)
	if volume == "" {
		logFile = path.Join(dataDir(tc.Spec.TiKV), file) // TiKV writes it under --data-dir
	}
	c := corev1.Container{
		Name:         name,
		Image:        defaultHelperImage,
		Command:      []string{"sh", "-c", fmt.Sprintf("touch %s; tail -n0 -F %s;", logFile, logFile)},
		VolumeMounts: []corev1.VolumeMount{mount},
	}
	if h := tc.Spec.Helper; h != nil {
		if h.Image != nil && *h.Image != "" {
			c.Image = *h.Image
		}
		if h.ImagePullPolicy != nil {
			c.ImagePullPolicy = *h.ImagePullPolicy
		}
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = tc.Spec.ImagePullPolicy
	}
	if lt := tc.Spec.TiKV.LogTailer; lt != nil {
		c.Resources = component.ContainerResources(lt.ResourceRequirements)
		c.SecurityContext = lt.SecurityContext.DeepCopy()
	}
	return c, nil
}

// logVolumeMount finds where the log volume is mounted in the tikv container.
func logVolumeMount(kv *v1alpha1.TiKVSpec, volume string) (corev1.VolumeMount, error) {
	if volume == "" {
		return corev1.VolumeMount{Name: dataVolume, MountPath: dataDirRoot}, nil
	}
	for _, sv := range kv.StorageVolumes {
		if sv.Name != volume {
			continue
		}
		mountPath := sv.MountPath
		if mountPath == "" {
			mountPath = defaultMountPath(sv.Name)
		}
		return corev1.VolumeMount{Name: names.TiKV + "-" + sv.Name, MountPath: mountPath}, nil
	}
	for _, m := range kv.AdditionalVolumeMounts {
		if m.Name == volume {
			return m, nil
		}
	}
	return corev1.VolumeMount{}, fmt.Errorf("log volume %q is neither a storage volume nor an additional volume mount of TiKV", volume)
}

// before50 reports whether version (such as "v4.0.9") is below 5.0, when
// TiKV still wrote its RocksDB logs as db/LOG and raft/LOG. An unparsable
// version (latest, nightly, a digest) counts as new.
func before50(version string) bool {
	v := strings.TrimPrefix(version, "v")
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n < 5
}
