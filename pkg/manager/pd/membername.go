package pd

import (
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// PD names a member after its pod ("<tc>-pd-<n>"), or after the pod's FQDN
// ("<pod>.<tc>-pd-peer.<ns>.svc[.<domain>]") when spec.clusterDomain or
// spec.acrossK8s is set (spec §3.5). Every lookup between a pod and its
// member goes through memberOfPod and podOfMember, so both forms work
// everywhere and a member of another cluster or namespace whose name
// starts with the same pod name is never taken for this cluster's.

// memberOfPod finds the PD member of pod in status.pd.members: the member
// named after the pod or after its FQDN (any cluster domain, so a member
// that joined before spec.clusterDomain changed is still found).
func memberOfPod(tc *v1alpha1.TidbCluster, pod string) (string, v1alpha1.PDMember, bool) {
	if m, ok := tc.Status.PD.Members[pod]; ok {
		return pod, m, true
	}
	for name, m := range tc.Status.PD.Members {
		if p, _, ok := podOfMember(tc, name); ok && p == pod {
			return name, m, true
		}
	}
	return "", v1alpha1.PDMember{}, false
}

// memberNameOfPod is the name of pod's member: the one PD lists (see
// memberOfPod), else the name PD gives a member of pod joining now.
func memberNameOfPod(tc *v1alpha1.TidbCluster, pod string) string {
	if name, _, ok := memberOfPod(tc, pod); ok {
		return name
	}
	if tc.Spec.AcrossK8s || tc.Spec.ClusterDomain != "" {
		return names.PodFQDN(pod, names.Peer(tc.Name, names.PD), tc.Namespace, tc.Spec.ClusterDomain)
	}
	return pod
}

// podOfMember returns the pod of this cluster's PD member name and the
// pod's ordinal; ok is false for a name that is not one of this cluster's
// PD pods or their FQDNs.
func podOfMember(tc *v1alpha1.TidbCluster, name string) (pod string, ordinal int32, ok bool) {
	pod, rest, fqdn := strings.Cut(name, ".")
	if fqdn && rest != peerDomain(tc) && !strings.HasPrefix(rest, peerDomain(tc)+".") {
		return "", 0, false
	}
	o, err := names.Ordinal(pod)
	if err != nil || pod != names.Pod(tc.Name, names.PD, o) {
		return "", 0, false
	}
	return pod, o, true
}

// peerDomain is "<tc>-pd-peer.<ns>.svc", the part of a member's FQDN after
// its pod's name and before the cluster domain.
func peerDomain(tc *v1alpha1.TidbCluster) string {
	return names.Peer(tc.Name, names.PD) + "." + tc.Namespace + ".svc"
}
