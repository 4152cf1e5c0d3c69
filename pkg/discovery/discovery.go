// Package discovery is the per-cluster discovery service (`tidb-discovery`,
// spec §4). A PD pod without data asks it, once at first start, which
// arguments to start pd-server with: exactly one PD of the initial batch is
// told to bootstrap a one-member cluster (--initial-cluster), every other PD
// is told to join the members PD already has (--join). The package also
// answers /verify for TiKV across Kubernetes clusters and proxies the PD
// dashboard (port 10262). Run for a DMCluster (Discovery.WithDM), it answers
// dm-master's start script the same way (DiscoverDM).
//
// The service reads the TidbCluster live on every request (its Role grants
// only `get` on the one TidbCluster), and keeps in memory nothing but the set
// of pods that have asked since the TidbCluster last changed.
package discovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// ErrInvalidRequest marks a request the caller got wrong (undecodable base64,
// a host that is not a PD peer address, another namespace). Retrying the
// same request cannot succeed; the HTTP handler answers 400 for it and 500
// for every other error — an unknown register type and every DM error
// included, as the TiDB Operator answers them.
var ErrInvalidRequest = errors.New("invalid discovery request")

// ClusterGetter reads a TidbCluster live from the API server. Discovery calls
// it on every request, because the bootstrap decision depends on the current
// resourceVersion, replicas and status, and a stale cache could let two PDs
// bootstrap two clusters.
type ClusterGetter interface {
	// GetTidbCluster returns the TidbCluster namespace/name, or the API error
	// (NotFound included) unchanged.
	GetTidbCluster(ctx context.Context, namespace, name string) (*v1alpha1.TidbCluster, error)
}

// ClusterGetterFunc adapts a function, such as a closure over the generated
// clientset's TidbClusters(ns).Get, to ClusterGetter.
type ClusterGetterFunc func(ctx context.Context, namespace, name string) (*v1alpha1.TidbCluster, error)

// GetTidbCluster calls f.
func (f ClusterGetterFunc) GetTidbCluster(ctx context.Context, namespace, name string) (*v1alpha1.TidbCluster, error) {
	return f(ctx, namespace, name)
}

// MembersGetter is the one PD call discovery makes: GET /pd/api/v1/members.
// pdapi's client satisfies it.
type MembersGetter interface {
	// GetMembers returns PD's member list, or an error when PD cannot answer
	// (for example while no PD has bootstrapped yet).
	GetMembers(ctx context.Context) (*pdapi.MembersInfo, error)
}

// PDClientFunc returns a MembersGetter for the PD client URL url, such as
// "https://basic-pd.ns:2379". It is called for every candidate URL of every
// join request, so an implementation should cache clients if they are costly.
type PDClientFunc func(url string) MembersGetter

// Discovery decides the pd-server start arguments. It is safe for concurrent
// use: Discover calls are serialised, because the bootstrap decision reads and
// writes the per-cluster peer sets.
type Discovery struct {
	namespace string
	tcName    string
	clusters  ClusterGetter
	pdClient  PDClientFunc

	dmClusters DMClusterGetter // nil unless WithDM
	dmClient   DMClientFunc

	mu      sync.Mutex
	peers   map[string]*peerSet // by namespace/name
	dmPeers map[string]*peerSet // DMClusters, by namespace/name
}

// peerSet is the set of pods that asked since the TidbCluster last changed.
type peerSet struct {
	resourceVersion string
	pods            map[string]struct{}
}

// New returns a Discovery serving the TidbCluster tcName in namespace, the
// discovery's own namespace (MY_POD_NAMESPACE) and cluster (TC_NAME).
// Requests for other namespaces are refused. clusters reads TidbClusters and
// pdClient builds PD clients; New calls neither.
func New(namespace, tcName string, clusters ClusterGetter, pdClient PDClientFunc) *Discovery {
	return &Discovery{
		namespace: namespace,
		tcName:    tcName,
		clusters:  clusters,
		pdClient:  pdClient,
		peers:     map[string]*peerSet{},
		dmPeers:   map[string]*peerSet{},
	}
}

// Discover answers GET /new for a PD whose advertise peer URL is
// advertisePeerURL ("<pod>.<tc>-pd-peer.<ns>.svc[.<domain>]:2380"): the
// arguments to append to pd-server, "--initial-cluster=…" or "--join=…".
//
// It records the pod in the cluster's peer set (reset whenever the
// TidbCluster's resourceVersion changes). When the set reaches the desired PD
// replicas and the cluster is not heterogeneous, the asking pod bootstraps
// (or joins spec.pdAddresses). Otherwise it queries PD for its members and
// answers --join with them, or returns an error while no PD answers or PD has
// no other member: the start script retries until it gets an answer. A pod
// leaves the peer set only when it receives arguments, so pods that are
// waiting keep counting towards the bootstrap decision.
func (d *Discovery) Discover(ctx context.Context, advertisePeerURL string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()

	peer, err := parseAdvertisePeerURL(advertisePeerURL)
	if err != nil {
		return "", err
	}
	if peer.namespace != d.namespace {
		return "", fmt.Errorf("%w: peer namespace %q is not the discovery namespace %q",
			ErrInvalidRequest, peer.namespace, d.namespace)
	}
	tc, err := d.clusters.GetTidbCluster(ctx, peer.namespace, peer.tcName)
	if err != nil {
		return "", fmt.Errorf("get TidbCluster %s/%s: %w", peer.namespace, peer.tcName, err)
	}
	set := d.peerSet(tc)
	set.pods[peer.pod] = struct{}{}
	logger := klog.FromContext(ctx).WithValues("tidbcluster", klog.KObj(tc), "pod", peer.pod)

	if len(set.pods) == pdDesiredReplicas(tc) && tc.Spec.Cluster == nil {
		delete(set.pods, peer.pod)
		args := bootstrapArgs(tc, peer)
		logger.Info("PD bootstraps the cluster", "args", args)
		return args, nil
	}
	args, err := d.joinArgs(ctx, tc, peer)
	if err != nil {
		logger.V(2).Info("PD must wait", "peers", len(set.pods), "desired", pdDesiredReplicas(tc), "reason", err.Error())
		return "", err
	}
	delete(set.pods, peer.pod)
	logger.Info("PD joins the cluster", "args", args)
	return args, nil
}

// peerSet returns the peer set of tc, emptied when tc's resourceVersion is
// not the one the set was built for: any change to the TidbCluster (a new
// replica count, a failover record) may change the bootstrap decision, so the
// counting starts over.
func (d *Discovery) peerSet(tc *v1alpha1.TidbCluster) *peerSet {
	key := tc.Namespace + "/" + tc.Name
	set := d.peers[key]
	if set == nil || set.resourceVersion != tc.ResourceVersion {
		set = &peerSet{resourceVersion: tc.ResourceVersion, pods: map[string]struct{}{}}
		d.peers[key] = set
	}
	return set
}

// bootstrapArgs are the arguments of the PD that completes the peer set: join
// the external PD cluster of spec.pdAddresses when set, else bootstrap a
// one-member cluster that the other PDs then join.
func bootstrapArgs(tc *v1alpha1.TidbCluster, peer advertisePeer) string {
	if len(tc.Spec.PDAddresses) > 0 {
		return "--join=" + strings.Join(tc.Spec.PDAddresses, ",")
	}
	return fmt.Sprintf("--initial-cluster=%s=%s://%s", peer.memberName(tc), scheme(tc), peer.url)
}

// joinArgs asks PD for its members, trying the candidate URLs in order until
// one answers, and returns --join with the client URL of every member except
// the caller itself. A restarted PD whose data directory was wiped may still
// be a member; joining itself would fail, so it is left out.
func (d *Discovery) joinArgs(ctx context.Context, tc *v1alpha1.TidbCluster, peer advertisePeer) (string, error) {
	info, url, err := d.getMembers(ctx, tc)
	if err != nil {
		return "", err
	}
	self := peer.memberName(tc)
	var urls []string
	for _, m := range info.Members {
		if m == nil || m.Name == peer.pod || m.Name == self || len(m.PeerUrls) == 0 {
			continue
		}
		urls = append(urls, strings.ReplaceAll(m.PeerUrls[0], ":2380", ":2379"))
	}
	if len(urls) == 0 {
		return "", fmt.Errorf("PD at %s has no member for %s to join yet", url, peer.pod)
	}
	return "--join=" + strings.Join(urls, ","), nil
}

// getMembers returns the members from the first candidate PD URL that
// answers, and that URL. When none answers the error lists every attempt.
func (d *Discovery) getMembers(ctx context.Context, tc *v1alpha1.TidbCluster) (*pdapi.MembersInfo, string, error) {
	var errs []error
	for _, url := range pdCandidateURLs(tc) {
		info, err := d.pdClient(url).GetMembers(ctx)
		if err == nil && info != nil {
			return info, url, nil
		}
		if err == nil {
			err = errors.New("empty answer")
		}
		errs = append(errs, fmt.Errorf("%s: %w", url, err))
	}
	if len(errs) == 0 {
		return nil, "", fmt.Errorf("no PD to ask for the members of TidbCluster %s/%s", tc.Namespace, tc.Name)
	}
	return nil, "", fmt.Errorf("get PD members of TidbCluster %s/%s: %w", tc.Namespace, tc.Name, errors.Join(errs...))
}
