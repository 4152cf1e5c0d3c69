// Package dmworker runs a DMCluster's dm-worker on the component skeleton,
// as the TiDB Operator v1.6 lays it out (spec dm.md §3.3): a headless
// Service <dc>-dm-worker-peer (8262), a ConfigMap with dm-worker's TOML and
// start script, and the StatefulSet <dc>-dm-worker, rolled by the
// StatefulSet controller itself (NoPartition). It waits until dm-master is
// available; workers come from dm-master's API, and an offline worker whose
// pod is gone for good is deleted from dm-master.
package dmworker

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/dmmaster"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Port and paths of dm-worker, as the TiDB Operator lays them out.
const (
	// Port serves dm-worker's API and metrics.
	Port       = 8262
	configDir  = "/etc/dm-worker"
	configFile = "dm-worker.toml"
	scriptFile = "dm_worker_start_script.sh"
	dataDir    = "/var/lib/dm-worker"
	tlsDir     = "/var/lib/dm-worker-tls"
	tlsVolume  = "dm-worker-tls"
)

// newServices returns the headless <dc>-dm-worker-peer, labelled as the
// workers are (no used-by, as in v1.6); workers have no client Service.
func newServices(dc *v1alpha1.DMCluster) []*corev1.Service {
	podLabels := dmmaster.Labels(dc, names.DMWorkerComponent)
	svc := component.NewStandaloneHeadlessService(dc.Namespace, names.DMWorkerPeer(dc.Name),
		podLabels, component.Port(names.DMWorkerComponent, Port))
	svc.Labels = podLabels
	return []*corev1.Service{svc}
}

// newConfigData returns config-file (spec.worker.config as TOML, with the
// TLS keys) and startup-script.
func newConfigData(dc *v1alpha1.DMCluster) (map[string]string, error) {
	return dmmaster.ConfigData(dc.Spec.Worker.Config, dmmaster.TLSConfig(dc, tlsDir), newStartScript(dc))
}

// newStatefulSet returns <dc>-dm-worker mounting configMap.
func newStatefulSet(dc *v1alpha1.DMCluster, configMap string) (*appsv1.StatefulSet, error) {
	ws := dc.Spec.Worker
	main := corev1.Container{
		Name:    names.DMWorkerComponent,
		Command: []string{"/bin/sh", component.ScriptMountPath + "/" + scriptFile},
		Ports:   []corev1.ContainerPort{{Name: "client", ContainerPort: Port, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: "CLUSTER_NAME", Value: dc.Name},
			{Name: "HEADLESS_SERVICE_NAME", Value: names.DMWorkerPeer(dc.Name)},
			{Name: "SET_NAME", Value: names.DMWorker(dc.Name)},
		},
		Resources: component.ContainerResources(ws.ResourceRequirements),
	}
	return dmmaster.NewStatefulSet(dc, dmmaster.Pod{
		Component: names.DMWorkerComponent, Main: main,
		ConfigMap: configMap, ConfigDir: configDir, ConfigFile: configFile, ScriptFile: scriptFile,
		DataDir: dataDir, StorageSize: ws.StorageSize,
		StorageClass: ws.StorageClassName, AttributesClass: ws.VolumeAttributesClassName,
		TLSVolume: tlsVolume, TLSDir: tlsDir, TLSSecret: names.DMClusterSecret(dc.Name, names.DMWorkerComponent),
		MetricsPort: Port,
	})
}

// newStartScript is dm-worker's start script (spec dm.md §4): no DNS wait
// and no data-dir flag; the worker joins dm-master's client Service and
// passes STORE_LABELS when that env is set.
func newStartScript(dc *v1alpha1.DMCluster) string {
	r := strings.NewReplacer("{{join}}", names.DMMaster(dc.Name)+":8261", "{{config}}", configDir+"/"+configFile)
	return dmmaster.ScriptPreamble("dm-worker") + r.Replace(workerScript)
}

const workerScript = `ARGS="--name=${POD_NAME} \
--join={{join}} \
--advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}:8262 \
--worker-addr=0.0.0.0:8262 \
--config={{config}}"

if [ -n "${STORE_LABELS:-}" ]; then
    ARGS="${ARGS} --labels ${STORE_LABELS}"
fi

echo "starting dm-worker ${ARGS}"
exec /dm-worker ${ARGS}
`
