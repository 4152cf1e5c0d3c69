package tidb

import (
	"fmt"
	"path"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// defaultReadinessDelay is the TiDB Operator's initial delay of TiDB's
// readiness probe: TiDB needs a few seconds to load its schema.
const defaultReadinessDelay = 10

// newStatefulSet returns TiDB's StatefulSet mounting configMap. TiDB keeps
// no data: it has a volume claim template only per storage volume.
func newStatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	db := tc.Spec.TiDB
	main := mainContainer(tc)
	extra := tlsVolumes(tc, &main)
	extra = append(extra, bootstrapSQLVolumes(tc, &main)...)
	extra = append(extra, authTokenVolumes(tc, &main)...)
	probeInit, probeVolumes := startupProbe(tc, &main)
	extra = append(extra, probeVolumes...)
	var sidecars, nativeSidecars []corev1.Container
	if separateSlowLog(db) {
		mount, owned, err := slowLogMount(db)
		if err != nil {
			return nil, err
		}
		if owned {
			extra = append(extra, corev1.Volume{Name: slowLogVolume,
				VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
			main.VolumeMounts = append(main.VolumeMounts, mount)
		}
		logFile := path.Join(mount.MountPath, slowLogFileName)
		main.Env = append(main.Env, corev1.EnvVar{Name: "SLOW_LOG_FILE", Value: logFile})
		tailer := slowLogTailer(tc, mount, logFile)
		if useNativeSidecar(db) {
			nativeSidecars = append(nativeSidecars, tailer)
		} else {
			sidecars = append(sidecars, tailer)
		}
	}
	main.Env = append(main.Env,
		corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		corev1.EnvVar{Name: "HEADLESS_SERVICE_NAME", Value: names.Peer(tc.Name, names.TiDB)})
	sts, err := component.NewStatefulSet(tc, component.PodSpec{
		Component:             names.TiDB,
		ServiceName:           names.Peer(tc.Name, names.TiDB),
		Main:                  main,
		Sidecars:              sidecars,
		ConfigMap:             configMap,
		ConfigDir:             configDir,
		ConfigFile:            configFile,
		ScriptFile:            scriptFile,
		StorageClass:          db.StorageClassName,
		VolumeAttributesClass: db.VolumeAttributesClassName,
		StorageVolumes:        db.StorageVolumes,
		DefaultMountPath:      defaultMountPath,
		ExtraVolumes:          extra,
		MetricsPort:           StatusPort,
		SysctlInit:            component.SysctlInitContainer,
	})
	if err != nil {
		return nil, err
	}
	pod := &sts.Spec.Template.Spec
	if probeInit != nil {
		pod.InitContainers = component.AfterSysctlInit(pod.InitContainers, component.SysctlInitContainer, *probeInit)
	}
	// A native sidecar comes after every other init container: those run
	// to completion first, the tailer then starts and keeps running
	// beside tidb, and stops after it.
	pod.InitContainers = append(pod.InitContainers, nativeSidecars...)
	return sts, nil
}

// useNativeSidecar tells whether the slow-log tailer runs as a native
// sidecar (spec.tidb.slowLogTailer.useSidecar, kubetidb's own field): a
// restartable init container, started before tidb and stopped after it, so
// that the last lines of the slow log are printed.
func useNativeSidecar(db *v1alpha1.TiDBSpec) bool {
	return db.SlowLogTailer != nil && db.SlowLogTailer.UseSidecar
}

func defaultMountPath(name string) string { return "/var/lib/tidb-" + name }

func separateSlowLog(db *v1alpha1.TiDBSpec) bool {
	return db.SeparateSlowLog == nil || *db.SeparateSlowLog
}

// mainContainer returns the tidb container without its TLS and slow-log
// mounts; the env is completed by newStatefulSet in the TiDB Operator's order.
func mainContainer(tc *v1alpha1.TidbCluster) corev1.Container {
	db := tc.Spec.TiDB
	binlog := db.BinlogEnabled != nil && *db.BinlogEnabled
	return corev1.Container{
		Name:    containerTiDB,
		Command: []string{"/bin/sh", component.ScriptMountPath + "/" + scriptFile},
		Ports: []corev1.ContainerPort{
			{Name: portServer, ContainerPort: ServerPort, Protocol: corev1.ProtocolTCP},
			{Name: portStatus, ContainerPort: StatusPort, Protocol: corev1.ProtocolTCP},
		},
		Env: []corev1.EnvVar{
			{Name: "CLUSTER_NAME", Value: tc.Name},
			{Name: "BINLOG_ENABLED", Value: strconv.FormatBool(binlog)},
		},
		ReadinessProbe: readinessProbe(tc),
		Lifecycle:      db.Lifecycle.DeepCopy(),
		Resources:      component.ContainerResources(db.ResourceRequirements),
	}
}

// readinessProbe is always set: a TCP check of the MySQL port, or with
// readinessProbe.type=command a curl of the status API, which fails while
// TiDB is up but cannot serve.
func readinessProbe(tc *v1alpha1.TidbCluster) *corev1.Probe {
	p := &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ServerPort)}},
		InitialDelaySeconds: defaultReadinessDelay,
	}
	spec := tc.Spec.TiDB.ReadinessProbe
	if spec == nil {
		return p
	}
	if spec.Type != nil && *spec.Type == "command" {
		p.ProbeHandler = corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: probeCommand(tc)}}
	}
	if spec.InitialDelaySeconds != nil {
		p.InitialDelaySeconds = *spec.InitialDelaySeconds
	}
	if spec.PeriodSeconds != nil {
		p.PeriodSeconds = *spec.PeriodSeconds
	}
	return p
}

func probeCommand(tc *v1alpha1.TidbCluster) []string {
	cmd := []string{"curl", fmt.Sprintf("%s://127.0.0.1:%d/status", names.Scheme(tlsEnabled(tc)), StatusPort),
		"--fail", "--location"}
	if tlsEnabled(tc) {
		cmd = append(cmd, "--cacert", tlsDir+"/ca.crt", "--cert", tlsDir+"/tls.crt", "--key", tlsDir+"/tls.key")
	}
	return cmd
}

// tlsVolumes mounts the cluster certificate and, for MySQL clients, the
// server certificate into main, and returns their pod volumes.
func tlsVolumes(tc *v1alpha1.TidbCluster, main *corev1.Container) []corev1.Volume {
	var vols []corev1.Volume
	if tlsEnabled(tc) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: tlsVolume, MountPath: tlsDir, ReadOnly: true})
		vols = append(vols, component.TLSVolume(tlsVolume, names.ClusterSecret(tc.Name, names.TiDB)))
	}
	if tlsClientEnabled(tc) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: serverTLSVolume, MountPath: serverTLSDir, ReadOnly: true})
		vols = append(vols, component.TLSVolume(serverTLSVolume, serverSecretName(tc.Name)))
	}
	return vols
}

// slowLogMount returns where the slow log lives: the storage or additional
// volume spec.tidb.slowLogVolumeName names, else a storage or additional
// volume the user already mounts at /var/log/tidb (two mounts at one path
// are invalid), else (owned=true) an emptyDir the builder adds there.
func slowLogMount(db *v1alpha1.TiDBSpec) (mount corev1.VolumeMount, owned bool, err error) {
	name := db.SlowLogVolumeName
	if name == "" {
		for _, sv := range db.StorageVolumes {
			if sv.MountPath == slowLogDir {
				return corev1.VolumeMount{Name: names.TiDB + "-" + sv.Name, MountPath: slowLogDir}, false, nil
			}
		}
		for _, m := range db.AdditionalVolumeMounts {
			if m.MountPath == slowLogDir {
				return m, false, nil
			}
		}
		return corev1.VolumeMount{Name: slowLogVolume, MountPath: slowLogDir}, true, nil
	}
	for _, sv := range db.StorageVolumes {
		if sv.Name != name {
			continue
		}
		mountPath := sv.MountPath
		if mountPath == "" {
			mountPath = defaultMountPath(sv.Name)
		}
		return corev1.VolumeMount{Name: names.TiDB + "-" + sv.Name, MountPath: mountPath}, false, nil
	}
	for _, m := range db.AdditionalVolumeMounts {
		if m.Name == name {
			return m, false, nil
		}
	}
	return corev1.VolumeMount{}, false, fmt.Errorf("slow log volume %q is neither a storage volume nor an additional volume mount of TiDB", name)
}

// slowLogTailer returns the helper container printing the slow log to stdout.
func slowLogTailer(tc *v1alpha1.TidbCluster, mount corev1.VolumeMount, logFile string) corev1.Container {
	c := corev1.Container{
		Name:         containerSlowLog,
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
	if t := tc.Spec.TiDB.SlowLogTailer; t != nil {
		if t.Image != nil && *t.Image != "" {
			c.Image = *t.Image // deprecated override, still honoured
		}
		if t.ImagePullPolicy != nil {
			c.ImagePullPolicy = *t.ImagePullPolicy
		}
		c.Resources = component.ContainerResources(t.ResourceRequirements)
		c.SecurityContext = t.SecurityContext.DeepCopy()
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = tc.Spec.ImagePullPolicy
	}
	if useNativeSidecar(tc.Spec.TiDB) {
		always := corev1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	return c
}
