package discovery

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// DM's peer and client ports: a dm-master advertises peer URLs on 8291 and
// serves clients (and --join targets) on 8261.
const (
	dmPeerPort   = ":8291"
	dmClientPort = ":8261"
)

// ErrDMNotConfigured is returned by DiscoverDM when the Discovery was built
// without WithDM: the process serves no DMCluster.
var ErrDMNotConfigured = errors.New("dm discovery is not configured")

// DMClusterGetter reads a DMCluster live from the API server, on every
// /new/{b64}/dm request, for the same reason as ClusterGetter.
type DMClusterGetter interface {
	// GetDMCluster returns the DMCluster namespace/name, or the API error
	// (NotFound included) unchanged.
	GetDMCluster(ctx context.Context, namespace, name string) (*v1alpha1.DMCluster, error)
}

// DMClusterGetterFunc adapts a function, such as a closure over the
// generated clientset's DMClusters(ns).Get, to DMClusterGetter.
type DMClusterGetterFunc func(ctx context.Context, namespace, name string) (*v1alpha1.DMCluster, error)

// GetDMCluster calls f.
func (f DMClusterGetterFunc) GetDMCluster(ctx context.Context, namespace, name string) (*v1alpha1.DMCluster, error) {
	return f(ctx, namespace, name)
}

// MastersGetter is the one dm-master call discovery makes: GET
// /apis/v1alpha1/members?master=true. dmapi.Client satisfies it.
type MastersGetter interface {
	// GetMasters returns the dm-master members, or an error when no
	// dm-master answers (for example before one has bootstrapped).
	GetMasters(ctx context.Context) ([]dmapi.MasterMember, error)
}

// DMClientFunc returns the MastersGetter of DMCluster namespace/dcName,
// over https with the client certificate <dc>-dm-client-secret when
// tlsEnabled. It is called on every join request and should cache clients
// (dmapi.Control does).
type DMClientFunc func(namespace, dcName string, tlsEnabled bool) MastersGetter

// WithDM makes d answer /new/{b64}/dm for DMClusters read through clusters,
// asking their dm-masters through client, and returns d. Call it before d
// serves requests.
func (d *Discovery) WithDM(clusters DMClusterGetter, client DMClientFunc) *Discovery {
	d.dmClusters, d.dmClient = clusters, client
	return d
}

// dmPeer is a parsed dm-master advertise peer URL,
// "<pod>.<dc>-dm-master-peer:8291".
type dmPeer struct {
	url    string // as received, without scheme
	pod    string
	dcName string
}

// parseDMPeerURL splits a dm-master advertise peer URL into exactly two
// dot-separated parts, the pod and "<dc>-dm-master-peer[:port]", as the
// dm-master start script builds it (no namespace, no svc suffix). Any other
// shape is an error.
func parseDMPeerURL(s string) (dmPeer, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 2 || parts[0] == "" {
		return dmPeer{}, fmt.Errorf("dm advertisePeerUrl format is wrong: %q is not <pod>.<dc>-dm-master-peer:8291", s)
	}
	svc, _, _ := strings.Cut(parts[1], ":")
	dcName, ok := strings.CutSuffix(svc, names.DMMasterPeer(""))
	if !ok || dcName == "" {
		return dmPeer{}, fmt.Errorf("dm advertisePeerUrl format is wrong: service %q in %q is not <dc>-dm-master-peer", svc, s)
	}
	return dmPeer{url: s, pod: parts[0], dcName: dcName}, nil
}

// DiscoverDM answers GET /new/{b64}/dm for a dm-master whose advertise peer
// URL is advertisePeerURL ("<pod>.<dc>-dm-master-peer:8291"), in the
// discovery's namespace: the arguments to append to dm-master.
//
// It records the pod in the DMCluster's peer set (reset whenever the
// DMCluster's resourceVersion changes). The pod that completes the set
// (spec.master.replicas plus the recorded failure members) bootstraps a
// one-member cluster with --initial-cluster; any other asks dm-master for its
// members and gets --join with their client URLs, itself excluded. Every
// error (bad URL, DMCluster unreadable, dm-master not answering or without a
// member to join) is returned for the handler to answer 500; the start
// script retries. Calls are serialised with Discover.
func (d *Discovery) DiscoverDM(ctx context.Context, advertisePeerURL string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dmClusters == nil || d.dmClient == nil {
		return "", ErrDMNotConfigured
	}
	peer, err := parseDMPeerURL(advertisePeerURL)
	if err != nil {
		return "", err
	}
	dc, err := d.dmClusters.GetDMCluster(ctx, d.namespace, peer.dcName)
	if err != nil {
		return "", fmt.Errorf("get DMCluster %s/%s: %w", d.namespace, peer.dcName, err)
	}
	set := d.dmPeerSet(dc)
	set.pods[peer.pod] = struct{}{}
	logger := klog.FromContext(ctx).WithValues("dmcluster", klog.KObj(dc), "pod", peer.pod)

	if desired := dmMasterDesired(dc); len(set.pods) == desired {
		delete(set.pods, peer.pod)
		args := fmt.Sprintf("--initial-cluster=%s=%s://%s", peer.pod, names.Scheme(dmTLS(dc)), peer.url)
		logger.Info("dm-master bootstraps the cluster", "args", args)
		return args, nil
	}
	args, err := d.dmJoinArgs(ctx, dc, peer)
	if err != nil {
		logger.V(2).Info("dm-master must wait", "peers", len(set.pods), "desired", dmMasterDesired(dc), "reason", err.Error())
		return "", err
	}
	delete(set.pods, peer.pod)
	logger.Info("dm-master joins the cluster", "args", args)
	return args, nil
}

// dmPeerSet returns the peer set of dc, emptied when dc's resourceVersion is
// not the one the set was built for (see peerSet). DMClusters have their own
// map, because a TidbCluster may share the name.
func (d *Discovery) dmPeerSet(dc *v1alpha1.DMCluster) *peerSet {
	key := dc.Namespace + "/" + dc.Name
	set := d.dmPeers[key]
	if set == nil || set.resourceVersion != dc.ResourceVersion {
		set = &peerSet{resourceVersion: dc.ResourceVersion, pods: map[string]struct{}{}}
		d.dmPeers[key] = set
	}
	return set
}

// dmJoinArgs asks dm-master for its members and returns --join with the
// first peer URL of each, port 8291 rewritten to the client port 8261,
// leaving out the caller (a restarted member whose data was wiped).
func (d *Discovery) dmJoinArgs(ctx context.Context, dc *v1alpha1.DMCluster, peer dmPeer) (string, error) {
	masters, err := d.dmClient(dc.Namespace, dc.Name, dmTLS(dc)).GetMasters(ctx)
	if err != nil {
		return "", fmt.Errorf("get dm-master members of DMCluster %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	var urls []string
	for _, m := range masters {
		if m.Name == peer.pod || len(m.PeerURLs) == 0 {
			continue
		}
		urls = append(urls, strings.ReplaceAll(m.PeerURLs[0], dmPeerPort, dmClientPort))
	}
	if len(urls) == 0 {
		return "", fmt.Errorf("DMCluster %s/%s has no dm-master member for %s to join yet", dc.Namespace, dc.Name, peer.pod)
	}
	return "--join=" + strings.Join(urls, ","), nil
}

// dmMasterDesired is the dm-master count the initial batch is complete at:
// spec.master.replicas plus every failure member recorded in status.
func dmMasterDesired(dc *v1alpha1.DMCluster) int {
	return int(dc.Spec.Master.Replicas) + len(dc.Status.Master.FailureMembers)
}

// dmTLS reports spec.tlsCluster.enabled.
func dmTLS(dc *v1alpha1.DMCluster) bool {
	return dc.Spec.TLSCluster != nil && dc.Spec.TLSCluster.Enabled
}
