// Package v1layout rewrites the objects kubetidb builds for a TidbCluster
// into the layout the TiDB Operator v1.6 gives the same TidbCluster (with
// the default start script version, not across Kubernetes clusters): the
// facts come from the spec (§3.2-3.5) and v1.6's member managers. The
// takeover tests write these objects while no operator runs and check that
// ours adopts them without restarting a pod; the unit tests of the
// template comparison use the same layout.
package v1layout

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// EnvOrder is the order v1 gives each main container's variables.
var EnvOrder = map[string][]string{
	"pd":        {"NAMESPACE", "PEER_SERVICE_NAME", "SERVICE_NAME", "SET_NAME", "TZ"},
	"tikv":      {"NAMESPACE", "CLUSTER_NAME", "HEADLESS_SERVICE_NAME", "CAPACITY", "TZ"},
	"tidb":      {"CLUSTER_NAME", "TZ", "BINLOG_ENABLED", "SLOW_LOG_FILE", "POD_NAME", "NAMESPACE", "HEADLESS_SERVICE_NAME"},
	"discovery": {"MY_POD_NAMESPACE", "TZ", "TC_NAME"},
	"tiflash":   {"NAMESPACE", "CLUSTER_NAME", "HEADLESS_SERVICE_NAME", "CAPACITY", "TZ"},
	"ticdc":     {"POD_NAME", "NAMESPACE", "HEADLESS_SERVICE_NAME", "TZ"},
	"tiproxy":   {"POD_NAME", "NAMESPACE", "HEADLESS_SERVICE_NAME"},
}

// tiflashSidecars is the order of TiFlash's log tailers after tiflash.
var tiflashSidecars = []string{"serverlog", "errorlog", "clusterlog"}

// PodTemplate rewrites tpl, our pod template of component comp for the
// defaulted tc, into v1.6's; configMaps maps our ConfigMap names to v1's.
func PodTemplate(tc *v1alpha1.TidbCluster, comp string, tpl *corev1.PodTemplateSpec, configMaps map[string]string) {
	spec := &tpl.Spec
	if main := container(spec.Containers, comp); main != nil {
		order := EnvOrder[comp]
		slices.SortStableFunc(main.Env, func(a, b corev1.EnvVar) int { return rank(order, a.Name) - rank(order, b.Name) })
	}
	for i := range spec.Volumes {
		if cm := spec.Volumes[i].ConfigMap; cm != nil && configMaps[cm.Name] != "" {
			cm.Name = configMaps[cm.Name]
		}
	}
	switch comp {
	case "tiflash":
		tiflash(spec)
	case "ticdc":
		dropAnnotationsVolume(spec)
		container(spec.Containers, comp).Command = []string{"/bin/sh", "-c", ticdcCommand(tc)}
	case "pump":
		pump(tc, spec)
	case "tiproxy":
		main := container(spec.Containers, comp)
		main.Env = slices.DeleteFunc(main.Env, func(e corev1.EnvVar) bool { return e.Name == "TZ" })
		main.ReadinessProbe = nil
	}
}

// tiflash puts tiflash first and its log tailers after it, each running
// v1's command, and gives the init container v1's script.
func tiflash(spec *corev1.PodSpec) {
	slices.SortStableFunc(spec.Containers, func(a, b corev1.Container) int {
		return containerRank(a.Name) - containerRank(b.Name)
	})
	for _, name := range tiflashSidecars {
		if c := container(spec.Containers, name); c != nil {
			file := c.Command[len(c.Command)-1]
			c.Command = []string{"sh", "-c", fmt.Sprintf("touch %s; tail -n0 -F %s;", file, file)}
		}
	}
	if c := container(spec.InitContainers, "init"); c != nil {
		c.Command = []string{"sh", "-c", TiFlashInitScript}
	}
}

// TiFlashInitScript is the init script v1.6 renders for TiFlash.
const TiFlashInitScript = "set -ex;ordinal=`echo ${POD_NAME} | awk -F- '{print $NF}'`;" +
	"sed s/POD_NUM/${ordinal}/g /etc/tiflash/config_templ.toml > /data0/config.toml;" +
	"sed s/POD_NUM/${ordinal}/g /etc/tiflash/proxy_templ.toml > /data0/proxy.toml"

func containerRank(name string) int {
	if name == "tiflash" {
		return 0
	}
	if i := slices.Index(tiflashSidecars, name); i >= 0 {
		return 1 + i
	}
	return 1 + len(tiflashSidecars)
}

// ticdcCommand is v1.6's one-line TiCDC command for tc without TLS and
// ConfigMap.
func ticdcCommand(tc *v1alpha1.TidbCluster) string {
	return "/cdc server --addr=0.0.0.0:8301 --advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc:8301 " +
		"--gc-ttl=86400 --log-file=/dev/stderr --log-level=info --pd=http://" + tc.Name + "-pd:2379"
}

// pump gives Pump v1.6's start script and volumes: no annotations, no
// NAMESPACE, a config mount not marked read-only. (v1's port has no
// protocol, which the API server defaults to ours, TCP.)
func pump(tc *v1alpha1.TidbCluster, spec *corev1.PodSpec) {
	dropAnnotationsVolume(spec)
	main := container(spec.Containers, "pump")
	main.Env = slices.DeleteFunc(main.Env, func(e corev1.EnvVar) bool { return e.Name == "NAMESPACE" })
	main.Command = []string{"/bin/sh", "-c", fmt.Sprintf(pumpScript, tc.Name, tc.Name)}
	for i := range main.VolumeMounts {
		main.VolumeMounts[i].ReadOnly = false
	}
}

const pumpScript = "set -euo pipefail\n\n/pump \\\n-pd-urls=http://%s-pd:2379 \\\n-L=info \\\n" +
	"-advertise-addr=`echo ${HOSTNAME}`.%s-pump:8250 \\\n-config=/etc/pump/pump.toml \\\n-data-dir=/data \\\n-log-file=\n\n" +
	"if [ $? == 0 ]; then\n    echo $(date -u +\"[%%Y/%%m/%%d %%H:%%M:%%S.%%3N %%:z]\") \"pump offline, please delete my pod\"\n" +
	"    tail -f /dev/null\nfi"

// dropAnnotationsVolume removes the downward-API annotations volume and
// its mounts: v1 mounts it only for start scripts of version v2.
func dropAnnotationsVolume(spec *corev1.PodSpec) {
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "annotations" })
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "annotations" })
	}
}

func container(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func rank(order []string, name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}
