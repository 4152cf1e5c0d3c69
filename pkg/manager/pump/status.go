package pump

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// ClientOptions says how the operator reaches tc's Pump API: over TLS exactly when TLS between
// components is on (Pump then serves its API with its cluster certificate), through the cluster
// domain when one is set.
func ClientOptions(tc *v1alpha1.TidbCluster) pumpapi.Options {
	return pumpapi.Options{TLSEnabled: tlsEnabled(tc), ClusterDomain: tc.Spec.ClusterDomain}
}

// observeMembers fills status.pump.members with the binlog registry, as the TiDB Operator does from
// PD's etcd: every pump record, this cluster's and those of other clusters sharing the PD, offline
// ones included, ordered by node ID. The registry is asked of the pumps of the StatefulSet in turn,
// Ready ones first, until one serves it. When none does, the members are kept as last read (the
// registry itself keeps a crashed pump's last state too) and the error is returned, to be logged:
// a pump being down never fails the sync. Without a pod there is nothing to ask and nothing to log.
func (c *Component) observeMembers(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	replicas := int32(0)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	pods, err := c.askOrder(tc, replicas, -1)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return nil // no pump to ask (scaled to zero, or no pod yet): the members stay as last read
	}
	registry, _, err := pumpapi.GetRegistry(ctx, c.pump, tc.Namespace, tc.Name, pods, ClientOptions(tc))
	if err != nil {
		return fmt.Errorf("pump members: %w", err)
	}
	tc.Status.Pump.Members = members(registry)
	return nil
}

// members converts the registry to status members.
func members(registry *pumpapi.Status) []*v1alpha1.PumpNodeStatus {
	var out []*v1alpha1.PumpNodeStatus
	for _, n := range registry.Sorted() {
		out = append(out, &v1alpha1.PumpNodeStatus{NodeID: n.NodeID, Host: n.Host, State: n.State})
	}
	return out
}

// askOrder returns the pods of ordinals 0..replicas-1 except skip that exist, Ready ones first (they
// answer), each group by ordinal. Without a pod cache every ordinal is listed.
func (c *Component) askOrder(tc *v1alpha1.TidbCluster, replicas, skip int32) ([]string, error) {
	var ready, other []string
	for o := range replicas {
		if o == skip {
			continue
		}
		name := names.Pod(tc.Name, names.Pump, o)
		if c.pods == nil {
			ready = append(ready, name)
			continue
		}
		p, err := c.pods.Pods(tc.Namespace).Get(name)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("get pod %s: %w", name, err)
		case component.PodReady(p):
			ready = append(ready, name)
		default:
			other = append(other, name)
		}
	}
	return slices.Concat(ready, other), nil
}

// Available reports whether TiDB may start with tc's Pump: true when spec.pump is not set, else once
// the binlog registry has an online pump (the TiDB Operator's PumpIsAvailable, spec §3.1). Any
// online pump of the registry counts, as TiDB writes binlog to any of them. When false, the reason
// says what TiDB waits for. For TiDB's dependency gate.
func Available(tc *v1alpha1.TidbCluster) (bool, string) {
	if tc.Spec.Pump == nil {
		return true, ""
	}
	for _, m := range tc.Status.Pump.Members {
		if m != nil && m.State == pumpapi.StateOnline {
			return true, ""
		}
	}
	return false, fmt.Sprintf("waiting for an online Pump: %d pump(s) in the binlog registry, none online",
		len(tc.Status.Pump.Members))
}
