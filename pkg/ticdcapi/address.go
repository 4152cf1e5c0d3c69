package ticdcapi

import (
	"net"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/names"
)

// CapturePod returns the name of the pod of TidbCluster namespace/tcName whose capture advertises
// address, and false when address is not one of that cluster's TiCDC pods. The operator starts each
// capture with --advertise-addr=<pod>.<tc>-ticdc-peer.<ns>.svc[.<domain>]:8301, so the pod is the
// first DNS label when the next two are the peer Service and the namespace; a capture of another
// cluster sharing the PD, or started by hand on an IP, belongs to no pod.
func CapturePod(address, namespace, tcName string) (string, bool) {
	host := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		host = h
	}
	labels := strings.SplitN(host, ".", 4)
	if len(labels) < 3 || labels[1] != names.Peer(tcName, names.TiCDC) || labels[2] != namespace {
		return "", false
	}
	if len(labels) == 4 && labels[3] != "svc" && !strings.HasPrefix(labels[3], "svc.") {
		return "", false
	}
	pod := labels[0]
	prefix := names.Member(tcName, names.TiCDC) + "-"
	if !strings.HasPrefix(pod, prefix) {
		return "", false
	}
	ordinal := pod[len(prefix):]
	if ordinal == "" || strings.Trim(ordinal, "0123456789") != "" {
		return "", false
	}
	return pod, true
}

// AdvertiseAddress returns the address the operator's capture on pod podName advertises:
// "<pod>.<tc>-ticdc-peer.<ns>.svc[.<domain>]:8301" (the inverse of CapturePod).
func AdvertiseAddress(namespace, tcName, podName, clusterDomain string) string {
	return names.PodFQDN(podName, names.Peer(tcName, names.TiCDC), namespace, clusterDomain) + ":8301"
}
