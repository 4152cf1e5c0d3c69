package pumpapi

import (
	"net"
	"strconv"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/names"
)

// NodePod returns the pod of TidbCluster namespace/tcName whose pump a registry record's host names,
// and whether it names one. The operator's pumps advertise "<pod>.<tc>-pump:8250", or with the namespace
// "<pod>.<tc>-pump.<ns>.svc[.<domain>]:8250" when the cluster has a cluster domain or spans Kubernetes
// clusters; both forms match (the domain is not compared). A pump of another cluster sharing the PD, of
// the same name in another namespace when qualified, or started by hand, names no pod.
func NodePod(host, namespace, tcName string) (string, bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	pod, rest, ok := strings.Cut(host, ".")
	service := names.Member(tcName, names.Pump)
	qualified := service + "." + namespace
	if !ok || (rest != service && rest != qualified && !strings.HasPrefix(rest, qualified+".")) {
		return "", false
	}
	ordinal, found := strings.CutPrefix(pod, service+"-")
	if !found || ordinal == "" || strings.TrimLeft(ordinal, "0123456789") != "" {
		return "", false
	}
	if _, err := strconv.ParseInt(ordinal, 10, 32); err != nil {
		return "", false
	}
	return pod, true
}
