// Package pdms runs PD's micro-services (spec.pd.mode "ms" with spec.pdms: tso and scheduling), one
// skeleton component per service, as the TiDB Operator v1.6 lays them out: a client Service
// <tc>-<svc>, a headless <tc>-<svc>-peer, a ConfigMap with PD's TOML and the `pd-server services <svc>`
// start script, and a StatefulSet <tc>-<svc> without a data volume. Members come from PD's
// micro-service registry; before a service's primary restarts it is moved to another member. The
// component skeleton does every write.
package pdms

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"text/template"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Ports, paths and file names, as the TiDB Operator lays them out.
const (
	// ClientPort serves the service's API and the metrics; PeerPort is
	// listed on the headless Service as PD's is.
	ClientPort   = 2379
	PeerPort     = 2380
	portClient   = "client"
	portServer   = "server"
	peerPort2380 = "tcp-peer-2380"
	peerPort2379 = "tcp-peer-2379"
	configDir    = "/etc/pd"
	configFile   = "pd.toml"
	scriptFile   = "pdms_start_script.sh"
	// The service reuses PD's certificate (<tc>-pd-cluster-secret).
	tlsDir          = "/var/lib/pd-tls"
	tlsVolume       = "pd-tls"
	clientTLSDir    = "/var/lib/cluster-client-tls"
	clientTLSVolume = "cluster-client-tls"
)

// spec is tc's spec.pdms entry for svc (nil when there is none).
func spec(tc *v1alpha1.TidbCluster, svc string) *v1alpha1.PDMSSpec {
	return components.PDMSEntry(&tc.Spec, svc)
}

func tlsEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

// newServices returns <tc>-<svc> (port client 2379, shaped by the entry's service) and the headless
// <tc>-<svc>-peer (ports 2380 and 2379).
func newServices(tc *v1alpha1.TidbCluster, svc string) []*corev1.Service {
	client := component.ClientService(tc, svc, names.Member(tc.Name, svc), spec(tc, svc).Service,
		component.Port(portClient, ClientPort))
	peer := component.HeadlessService(tc, svc, names.Peer(tc.Name, svc),
		component.Port(peerPort2380, PeerPort), component.Port(peerPort2379, ClientPort))
	return []*corev1.Service{client, peer}
}

// newConfigData returns the config file (PD's TOML, an empty one without config; with TLS the
// certificate paths) and the start script. The ConfigMap always exists, as in the TiDB Operator.
func newConfigData(tc *v1alpha1.TidbCluster, svc string) (map[string]string, error) {
	forced := map[string]any{}
	if tlsEnabled(tc) {
		forced["security.cacert-path"] = tlsDir + "/ca.crt"
		forced["security.cert-path"] = tlsDir + "/tls.crt"
		forced["security.key-path"] = tlsDir + "/tls.key"
	}
	cfg := spec(tc, svc).Config
	if cfg == nil {
		cfg = &v1alpha1.Config{}
	}
	file, err := component.RenderConfig(cfg, forced)
	if err != nil {
		return nil, err
	}
	script, err := newStartScript(tc, svc)
	if err != nil {
		return nil, err
	}
	return map[string]string{component.ConfigFileKey: file, component.StartScriptKey: script}, nil
}

// newStatefulSet returns <tc>-<svc> mounting configMap: container <svc> running the start script,
// port server 2379, PD's certificate with TLS, no data volume (only storageVolumes).
func newStatefulSet(tc *v1alpha1.TidbCluster, svc, configMap string) (*appsv1.StatefulSet, error) {
	ms := spec(tc, svc)
	env := []corev1.EnvVar{
		{Name: "PEER_SERVICE_NAME", Value: names.Peer(tc.Name, svc)},
		{Name: "SERVICE_NAME", Value: names.Member(tc.Name, svc)},
		{Name: "SET_NAME", Value: names.Member(tc.Name, svc)},
		{Name: "CLUSTER_NAME", Value: tc.Name},
		{Name: "HEADLESS_SERVICE_NAME", Value: names.Peer(tc.Name, svc)},
	}
	if defaulting.NewComponentAccessor(tc, defaulting.Component(svc)).HostNetwork() {
		env = append(env, corev1.EnvVar{Name: "POD_NAME",
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	}
	main := corev1.Container{
		Name:      svc,
		Command:   []string{"/bin/sh", component.ScriptMountPath + "/" + scriptFile},
		Ports:     []corev1.ContainerPort{{Name: portServer, ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP}},
		Env:       env,
		Resources: component.ContainerResources(ms.ResourceRequirements),
	}
	var extra []corev1.Volume
	if tlsEnabled(tc) {
		main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: tlsVolume, MountPath: tlsDir, ReadOnly: true})
		extra = append(extra, component.TLSVolume(tlsVolume, names.ClusterSecret(tc.Name, names.PD)))
		if ms.MountClusterClientSecret != nil && *ms.MountClusterClientSecret {
			main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: clientTLSVolume, MountPath: clientTLSDir, ReadOnly: true})
			extra = append(extra, component.TLSVolume(clientTLSVolume, names.ClusterClientSecret(tc.Name)))
		}
	}
	return component.NewStatefulSet(tc, component.PodSpec{
		Component:             svc,
		ServiceName:           names.Peer(tc.Name, svc),
		Main:                  main,
		ConfigMap:             configMap,
		ConfigDir:             configDir,
		ConfigFile:            configFile,
		ScriptFile:            scriptFile,
		StorageClass:          ms.StorageClassName,
		VolumeAttributesClass: ms.VolumeAttributesClassName,
		StorageVolumes:        ms.StorageVolumes,
		DefaultMountPath:      func(name string) string { return "/var/lib/" + svc + "-" + name },
		ExtraVolumes:          extra,
		MetricsPort:           ClientPort,
		SysctlInit:            component.SysctlInitContainer,
	})
}

// startScript is `pd-server services <svc>` (spec pd-microservices §3): the pod's own name is waited
// for as the v2 scripts' feature flags say, then the service starts against PD's client Service.
var startScript = template.Must(template.New("pdms").Parse(`{{.Preamble}}
PDMS_POD_NAME=${POD_NAME:-$HOSTNAME}
PD_DOMAIN="${PDMS_POD_NAME}.{{.PeerService}}.{{.Namespace}}{{.DomainSuffix}}"
{{.Wait}}
ARGS="services {{.Service}}{{if .Name}} --name={{.Name}}{{end}} \
--listen-addr={{.Scheme}}://0.0.0.0:2379 \
--advertise-listen-addr={{.Scheme}}://${PD_DOMAIN}:2379 \
--backend-endpoints={{.Backend}} \
--config=/etc/pd/pd.toml"

echo "starting pd-server ${ARGS}"
exec /pd-server ${ARGS}
`))

type scriptParams struct {
	Preamble, Wait, PeerService, Namespace, DomainSuffix string
	Service, Name, Scheme, Backend                       string
}

// newStartScript renders svc's start script. --name is passed from v8.3.0 on (the pod's name, or its
// FQDN with spec.clusterDomain); the DNS wait lasts spec.pd.startTimeout seconds, as v1.6's does.
func newStartScript(tc *v1alpha1.TidbCluster, svc string) (string, error) {
	opts := component.NewScriptV2(tc)
	scheme := names.Scheme(tlsEnabled(tc))
	p := scriptParams{
		Preamble:     opts.Preamble("pd-server services "+svc, "PD "+svc),
		PeerService:  names.Peer(tc.Name, svc),
		Namespace:    tc.Namespace,
		DomainSuffix: ".svc",
		Service:      svc,
		Scheme:       scheme,
		Backend:      scheme + "://" + names.Member(tc.Name, names.PD) + ":" + strconv.Itoa(pd.ClientPort),
	}
	if d := tc.Spec.ClusterDomain; d != "" {
		p.DomainSuffix = ".svc." + d
	}
	if NamesItself(tc, svc) {
		p.Name = "${PDMS_POD_NAME}"
		if tc.Spec.ClusterDomain != "" {
			p.Name = "${PD_DOMAIN}"
		}
	}
	timeout := 30
	if tc.Spec.PD != nil && tc.Spec.PD.StartTimeout > 0 {
		timeout = tc.Spec.PD.StartTimeout
	}
	p.Wait = opts.WaitFor(`"${PD_DOMAIN}"`, component.LookupDig, timeout, false)
	var buf bytes.Buffer
	if err := startScript.Execute(&buf, p); err != nil {
		return "", fmt.Errorf("render the %s start script: %w", svc, err)
	}
	return buf.String(), nil
}

// NamesItself reports whether svc's image is v8.3.0 or newer, whose pd-server takes --name and
// serves primary lookups and transfers; a pre-release suffix is ignored and a version that is not a
// number (latest, nightly, master) counts as newest.
func NamesItself(tc *v1alpha1.TidbCluster, svc string) bool {
	v := strings.TrimPrefix(defaulting.NewComponentAccessor(tc, defaulting.Component(svc)).Version(), "v")
	major, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err := strconv.Atoi(major)
	if err != nil {
		return true
	}
	mi, err := strconv.Atoi(strings.TrimRightFunc(minor, func(r rune) bool { return r < '0' || r > '9' }))
	if err != nil {
		mi = 0
	}
	return ma > 8 || ma == 8 && mi >= 3
}
