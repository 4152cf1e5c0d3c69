// Package names builds the name of every object the operator creates for a
// TidbCluster, and the DNS names its members advertise. The names are the
// TiDB Operator's, so existing tooling and dashboards keep working. Nothing
// here touches the API.
package names

import (
	"fmt"
	"strconv"
	"strings"
)

// Component names as they appear in object names and labels.
const (
	Discovery = "discovery"
	PD        = "pd"
	TiKV      = "tikv"
	TiDB      = "tidb"
	TiFlash   = "tiflash"
	TiCDC     = "ticdc"
	Pump      = "pump"
)

// Member returns "<tc>-<component>": the StatefulSet, the client Service and
// the ConfigMap (InPlace strategy) of a component.
func Member(tc, component string) string { return tc + "-" + component }

// Peer returns "<tc>-<component>-peer", the headless Service of a component.
func Peer(tc, component string) string { return Member(tc, component) + "-peer" }

// DiscoveryName returns "<tc>-discovery": the discovery Deployment, Service,
// ServiceAccount, Role and RoleBinding.
func DiscoveryName(tc string) string { return Member(tc, Discovery) }

// Pod returns the name of the pod with the given ordinal: "<tc>-<component>-<ordinal>".
func Pod(tc, component string, ordinal int32) string {
	return Member(tc, component) + "-" + strconv.Itoa(int(ordinal))
}

// PVC returns the name the StatefulSet controller gives the PVC of a volume
// claim template for an ordinal: "<volume>-<tc>-<component>-<ordinal>".
func PVC(volume, tc, component string, ordinal int32) string {
	return volume + "-" + Pod(tc, component, ordinal)
}

// Ordinal parses the ordinal of a StatefulSet pod name, e.g. 2 for "basic-pd-2".
func Ordinal(podName string) (int32, error) {
	i := strings.LastIndexByte(podName, '-')
	if i < 0 {
		return 0, fmt.Errorf("pod name %q has no ordinal", podName)
	}
	n, err := strconv.ParseInt(podName[i+1:], 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("pod name %q has no ordinal", podName)
	}
	return int32(n), nil
}

// ConfigMapWithHash returns "<tc>-<component>-<hash>", the ConfigMap name
// used by the RollingUpdate config strategy.
func ConfigMapWithHash(tc, component, hash string) string { return Member(tc, component) + "-" + hash }

// ClusterClientSecret returns "<tc>-cluster-client-secret", the client
// certificate the operator uses to talk to PD and TiDB when TLS is on.
func ClusterClientSecret(tc string) string { return tc + "-cluster-client-secret" }

// ClusterSecret returns "<tc>-<component>-cluster-secret", a component's
// certificate for TLS between components.
func ClusterSecret(tc, component string) string { return Member(tc, component) + "-cluster-secret" }

// serviceDomain returns ".svc" or ".svc.<domain>".
func serviceDomain(clusterDomain string) string {
	if clusterDomain == "" {
		return ".svc"
	}
	return ".svc." + clusterDomain
}

// PodFQDN returns the DNS name a StatefulSet pod advertises:
// "<pod>.<peer service>.<namespace>.svc[.<domain>]".
func PodFQDN(pod, peerService, namespace, clusterDomain string) string {
	return pod + "." + peerService + "." + namespace + serviceDomain(clusterDomain)
}

// ServiceHost returns "<service>.<namespace>", or
// "<service>.<namespace>.svc.<domain>" when a cluster domain is set: the host
// the operator uses to reach a cluster's Service.
func ServiceHost(service, namespace, clusterDomain string) string {
	if clusterDomain == "" {
		return service + "." + namespace
	}
	return service + "." + namespace + serviceDomain(clusterDomain)
}

// Scheme returns "https" when TLS between components is on, else "http".
func Scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}
