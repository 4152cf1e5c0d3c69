package simulator

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

// targetKind is which simulated endpoint a host:port names.
type targetKind int

const (
	// targetPDService is <tc>-pd.<ns>…:2379 or <tc>-pd-peer.<ns>…:2379: any PD endpoint.
	targetPDService targetKind = iota
	// targetPDMember is <pod>.<tc>-pd-peer.<ns>…:2379: one PD member.
	targetPDMember
	// targetTiDBService is <tc>-tidb.<ns>…:10080 or <tc>-tidb-peer.<ns>…:10080: any TiDB status endpoint.
	targetTiDBService
	// targetTiDBPod is <pod>.<tc>-tidb-peer.<ns>…:10080: one TiDB status endpoint.
	targetTiDBPod
	// targetTiKVPod is <pod>.<tc>-tikv-peer.<ns>…:20180: one TiKV status endpoint.
	targetTiKVPod
	// targetTiFlashPod is <pod>.<tc>-tiflash-peer.<ns>…:20292: one TiFlash proxy status endpoint.
	targetTiFlashPod
	// targetTiCDCService is <tc>-ticdc-peer.<ns>…:8301: any TiCDC server.
	targetTiCDCService
	// targetTiCDCPod is <pod>.<tc>-ticdc-peer.<ns>…:8301: one TiCDC server (capture).
	targetTiCDCPod
	// targetTiProxyService is <tc>-tiproxy.<ns>…:3080 or <tc>-tiproxy-peer.<ns>…:3080: any TiProxy API.
	targetTiProxyService
	// targetTiProxyPod is <pod>.<tc>-tiproxy-peer.<ns>…:3080: one TiProxy API endpoint.
	targetTiProxyPod
	// targetPumpService is <tc>-pump.<ns>…:8250 (Pump's headless Service): any Pump server.
	targetPumpService
	// targetPumpPod is <pod>.<tc>-pump.<ns>…:8250: one Pump server.
	targetPumpPod
	// targetPDMSService is <tc>-<svc>.<ns>…:2379 or <tc>-<svc>-peer.<ns>…:2379 of PD micro-service svc.
	targetPDMSService
	// targetPDMSPod is <pod>.<tc>-<svc>-peer.<ns>…:2379: one member of a PD micro-service.
	targetPDMSPod
)

// Ports of the simulated endpoints.
const (
	pdClientPort           = "2379"
	tidbStatusPort         = "10080"
	tikvStatusPort         = "20180"
	tiflashProxyStatusPort = "20292"
	ticdcPort              = "8301"
	tiproxyAPIPort         = "3080"
	pumpPort               = "8250"
)

// target is a parsed simulated address.
type target struct {
	key  ClusterKey
	kind targetKind
	// pod is the pod of a per-pod target, or the pod chosen to serve a service target.
	pod string
	// service is the Kubernetes Service name in the address, e.g. "basic-pd" or "basic-pd-peer".
	service string
	// hostport is the address as requested.
	hostport string
	// owner is the heterogeneous cluster the address names when key was routed to the cluster it joins.
	owner ClusterKey
}

// component is the component that serves the target.
func (t target) component() Component {
	switch t.kind {
	case targetTiDBService, targetTiDBPod:
		return ComponentTiDB
	case targetTiKVPod:
		return ComponentTiKV
	case targetTiFlashPod:
		return ComponentTiFlash
	case targetTiCDCService, targetTiCDCPod:
		return ComponentTiCDC
	case targetTiProxyService, targetTiProxyPod:
		return ComponentTiProxy
	case targetPumpService, targetPumpPod:
		return ComponentPump
	case targetPDMSService, targetPDMSPod:
		if strings.HasSuffix(strings.TrimSuffix(t.service, "-peer"), "-"+string(ComponentScheduling)) {
			return ComponentScheduling
		}
		return ComponentTSO
	}
	return ComponentPD
}

// peerService reports whether the address goes through a headless peer Service, whose DNS also lists pods
// that are not Ready (publishNotReadyAddresses).
func (t target) peerService() bool { return strings.HasSuffix(t.service, "-peer") }

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// serviceSuffixes maps the suffix of a Service name to the component behind it, longest first.
var serviceSuffixes = []struct {
	suffix string
	comp   Component
}{
	{"-scheduling-peer", ComponentScheduling}, {"-tso-peer", ComponentTSO},
	{"-tiproxy-peer", ComponentTiProxy}, {"-tiflash-peer", ComponentTiFlash}, {"-ticdc-peer", ComponentTiCDC},
	{"-pd-peer", ComponentPD}, {"-tikv-peer", ComponentTiKV}, {"-tidb-peer", ComponentTiDB},
	{"-scheduling", ComponentScheduling}, {"-tso", ComponentTSO},
	{"-tiproxy", ComponentTiProxy}, {"-pump", ComponentPump}, {"-pd", ComponentPD}, {"-tidb", ComponentTiDB},
}

// parseTarget resolves hostport, as a client inside the cluster would dial it, to a simulated endpoint.
// Accepted names are <svc>.<ns>[.svc[.<domain>]] and <pod>.<svc>.<ns>[.svc[.<domain>]]; defaultPort is
// used when hostport has none. It errors, with a message fit for the client, when the address is not one
// the simulator answers.
func parseTarget(hostport, defaultPort string) (target, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	pod, svc, ns, err := splitServiceHost(host)
	if err != nil {
		return target{}, err
	}
	t := target{service: svc, pod: pod, hostport: net.JoinHostPort(host, port)}
	comp, tc := Component(""), ""
	for _, s := range serviceSuffixes {
		if name, ok := strings.CutSuffix(svc, s.suffix); ok && name != "" {
			comp, tc = s.comp, name
			break
		}
	}
	if comp == "" {
		return target{}, fmt.Errorf("%s: service %q is not a PD, TiKV, TiFlash, TiDB, TiCDC, TiProxy, Pump or PD micro-service service of a TidbCluster", hostport, svc)
	}
	t.key = ClusterKey{Namespace: ns, Name: tc}
	kind, ok := targetKindOf(comp, pod != "", t.peerService(), port)
	if !ok {
		return target{}, fmt.Errorf("%s: port %s of service %s is not simulated", hostport, port, svc)
	}
	t.kind = kind
	return t, nil
}

// splitServiceHost splits a Kubernetes Service or pod DNS name into pod (empty for a Service), service
// and namespace.
func splitServiceHost(host string) (pod, svc, ns string, err error) {
	labels := strings.Split(host, ".")
	n := len(labels)
	switch {
	case n >= 3 && labels[2] == "svc", n == 2:
		svc, ns = labels[0], labels[1]
	case n >= 4 && labels[3] == "svc", n == 3:
		pod, svc, ns = labels[0], labels[1], labels[2]
	default:
		return "", "", "", fmt.Errorf("%s is not a Kubernetes service or pod DNS name", host)
	}
	for _, l := range []string{pod, svc, ns} {
		if l != "" && !dnsLabel.MatchString(l) {
			return "", "", "", fmt.Errorf("%s is not a Kubernetes service or pod DNS name", host)
		}
	}
	return pod, svc, ns, nil
}

// targetKindOf decides the endpoint from component, address form and port.
func targetKindOf(comp Component, perPod, peer bool, port string) (targetKind, bool) {
	switch {
	case comp == ComponentPD && port == pdClientPort && !perPod:
		return targetPDService, true
	case comp == ComponentPD && port == pdClientPort && peer:
		return targetPDMember, true
	case comp == ComponentTiDB && port == tidbStatusPort && !perPod:
		return targetTiDBService, true
	case comp == ComponentTiDB && port == tidbStatusPort && peer:
		return targetTiDBPod, true
	case comp == ComponentTiKV && port == tikvStatusPort && perPod:
		return targetTiKVPod, true
	case comp == ComponentTiFlash && port == tiflashProxyStatusPort && perPod:
		return targetTiFlashPod, true
	case comp == ComponentTiCDC && port == ticdcPort && perPod:
		return targetTiCDCPod, true
	case comp == ComponentTiCDC && port == ticdcPort:
		return targetTiCDCService, true
	case comp == ComponentTiProxy && port == tiproxyAPIPort && !perPod:
		return targetTiProxyService, true
	case comp == ComponentTiProxy && port == tiproxyAPIPort && peer:
		return targetTiProxyPod, true
	case comp == ComponentPump && port == pumpPort && perPod:
		return targetPumpPod, true
	case comp == ComponentPump && port == pumpPort:
		return targetPumpService, true
	case (comp == ComponentTSO || comp == ComponentScheduling) && port == pdClientPort && !perPod:
		return targetPDMSService, true
	case (comp == ComponentTSO || comp == ComponentScheduling) && port == pdClientPort && peer:
		return targetPDMSPod, true
	}
	return 0, false
}
