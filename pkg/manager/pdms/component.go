package pdms

import (
	"context"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdmsapi"
)

// Component is one PD micro-service as the skeleton sees it.
type Component struct {
	svc string
	api pdmsapi.Client
}

// NewTSO returns the tso service over env (PD and the service reached through env.HTTP).
func NewTSO(env *component.Env) *Component { return newComponent(names.TSO, env) }

// NewScheduling returns the scheduling service over env.
func NewScheduling(env *component.Env) *Component { return newComponent(names.Scheduling, env) }

func newComponent(svc string, env *component.Env) *Component {
	var api pdmsapi.Client
	if env.HTTP != nil {
		api = pdmsapi.NewClient(env.HTTP, 0)
	}
	return NewWithClient(svc, api)
}

// NewWithClient returns service svc asking api (tests); a nil api asks nothing.
func NewWithClient(svc string, api pdmsapi.Client) *Component { return &Component{svc: svc, api: api} }

var (
	_ component.Component[*v1alpha1.TidbCluster]       = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]        = (*Component)(nil)
	_ component.HealthChecker[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradePreparer[*v1alpha1.TidbCluster] = (*Component)(nil)
)

// Name is the service's name, "tso" or "scheduling".
func (c *Component) Name() string { return c.svc }

// Enabled reports whether tc runs PD in micro-service mode (spec.pd.mode "ms" with spec.pdms) with an
// entry for this service.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool {
	return pd.MicroServices(tc) && spec(tc, c.svc) != nil
}

// Replicas is the entry's replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return spec(tc, c.svc).Replicas }

// Status is status.pdms.<svc>.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &components.PDMSStatus(&tc.Status, c.svc).ComponentStatus
}

// Services returns <tc>-<svc> and <tc>-<svc>-peer.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service {
	return newServices(tc, c.svc)
}

// ConfigData returns pd.toml and the start script.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc, c.svc)
}

// StatefulSet returns <tc>-<svc>.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	if configMap == "" {
		configMap = names.Member(tc.Name, c.svc)
	}
	return newStatefulSet(tc, c.svc, configMap)
}

// Traits says: a micro-service keeps no data of its own (PD holds its state), so a member goes without
// preparation, as in the TiDB Operator; nothing holds back its rollout.
func (c *Component) Traits() component.Traits { return component.Traits{FreeScaleIn: true} }

// options says how to reach tc's PD and services.
func options(tc *v1alpha1.TidbCluster) pdmsapi.Options {
	return pdmsapi.Options{TLSEnabled: tlsEnabled(tc), ClusterDomain: tc.Spec.ClusterDomain}
}

// Observe fills status.pdms.<svc>: members as PD lists them (synced once PD answered; a failed
// listing keeps what was known, as the TiDB Operator does, and is logged, since the services start
// before PD exists), and for tso whether the service answers its health check. Before the
// StatefulSet exists there is nothing to ask.
func (c *Component) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	st := components.PDMSStatus(&tc.Status, c.svc)
	if sts == nil {
		st.Synced, st.Members, st.Healthy = false, nil, false
		return nil
	}
	if c.api == nil {
		return nil
	}
	members, err := c.api.Members(ctx, tc.Namespace, tc.Name, c.svc, options(tc))
	if err != nil {
		klog.FromContext(ctx).V(2).Info("PD did not list the micro-service's members", "service", c.svc, "err", err)
	} else {
		sort.Strings(members)
		st.Synced, st.Members = true, members
	}
	if c.svc != names.TSO {
		return nil
	}
	healthy, err := c.api.Healthy(ctx, tc.Namespace, tc.Name, options(tc))
	if err != nil {
		return err
	}
	st.Healthy = healthy
	return nil
}

// PodHealthy reports whether PD lists podName among the service's members.
func (c *Component) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	return registered(tc.Status.PDMS[c.svc], podName)
}

func registered(st *v1alpha1.PDMSStatus, podName string) bool {
	if st == nil {
		return false
	}
	for _, m := range st.Members {
		if memberPod(m) == podName {
			return true
		}
	}
	return false
}

// memberPod is the pod a service address names: "http://<pod>.<tc>-<svc>-peer.<ns>.svc:2379" ⇒ <pod>.
func memberPod(addr string) string {
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		addr = rest
	}
	pod, _, _ := strings.Cut(addr, ".")
	return pod
}

// PreUpgradePod moves the service's primary off the pod with ordinal before it restarts (v8.3.0 and
// newer, with more than one member; spec pd-microservices §7): the primary goes to the registered
// member of highest ordinal, and the restart waits until PD names another primary. With no other
// member registered the pod restarts, as in the TiDB Operator.
func (c *Component) PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if c.api == nil || !NamesItself(tc, c.svc) {
		return nil
	}
	pod := names.Pod(tc.Name, c.svc, ordinal)
	primary, err := c.api.Primary(ctx, tc.Namespace, tc.Name, c.svc, options(tc))
	if err != nil {
		return err
	}
	if memberPod(primary) != pod {
		return nil
	}
	target := transferTarget(tc.Status.PDMS[c.svc], pod)
	if target == "" {
		klog.FromContext(ctx).Info("no other member to take the primary; restarting it", "service", c.svc, "pod", pod)
		return nil
	}
	if err := c.api.TransferPrimary(ctx, tc.Namespace, tc.Name, c.svc, memberName(tc, c.svc, target), options(tc)); err != nil {
		return err
	}
	return flow.Requeue("moving the %s primary from %s to %s before it restarts", c.svc, pod, target)
}

// transferTarget is the registered member of highest ordinal other than pod ("" when none).
func transferTarget(st *v1alpha1.PDMSStatus, pod string) string {
	if st == nil {
		return ""
	}
	best, bestOrdinal := "", -1
	for _, m := range st.Members {
		p := memberPod(m)
		i := strings.LastIndexByte(p, '-')
		if p == pod || i < 0 {
			continue
		}
		n, err := strconv.Atoi(p[i+1:])
		if err != nil || n <= bestOrdinal {
			continue
		}
		best, bestOrdinal = p, n
	}
	return best
}

// memberName is the name pod's service member runs under (--name): the pod's name, or its FQDN with
// spec.clusterDomain.
func memberName(tc *v1alpha1.TidbCluster, svc, pod string) string {
	if d := tc.Spec.ClusterDomain; d != "" {
		return pod + "." + names.Peer(tc.Name, svc) + "." + tc.Namespace + ".svc." + d
	}
	return pod
}
