package tidb

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/store"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// serverLabelsSince is the first TiDB that takes server labels (POST /labels).
var serverLabelsSince = [2]int{6, 3}

// syncServerLabels gives each healthy TiDB server whose pod is scheduled
// the labels of its node under PD's location-labels, plus "zone" (spec
// §5: only TiDB ≥ 6.3.0, and only when PD's location-labels hold a zone
// key), when what the server reports in /info lacks or differs from them.
// Failures are logged and tried again on the next observation; they never
// fail the sync. A refresh that reads only failures leaves labels alone
// (the next full reading checks them).
func (c *Component) syncServerLabels(ctx context.Context, tc *v1alpha1.TidbCluster) {
	setter, ok := c.tidb.(tidbapi.LabelSetter)
	if !ok || c.pd == nil || c.nodes == nil || c.pods == nil || !takesServerLabels(tc) || flow.FailuresOnly(ctx) {
		return
	}
	logger := klog.FromContext(ctx)
	locations, err := store.LocationLabels(ctx, pd.ClientFor(c.pd, tc), tc)
	if err != nil {
		logger.Info("TiDB server labels not synced", "err", err)
		return
	}
	if !slices.ContainsFunc(locations, func(k string) bool { return slices.Contains(store.ZoneKeys, k) }) {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(tc.Status.TiDB.Members)) {
		if !tc.Status.TiDB.Members[name].Health {
			continue
		}
		err := c.syncServer(ctx, tc, setter, name, locations)
		if errors.Is(err, store.ErrNoNodeAccess) {
			return
		}
		if err != nil {
			logger.Info("TiDB server labels not set", "pod", name, "err", err)
		}
	}
}

func (c *Component) syncServer(ctx context.Context, tc *v1alpha1.TidbCluster, setter tidbapi.LabelSetter,
	podName string, locations []string) error {
	pod, err := c.pods.Pods(tc.Namespace).Get(podName)
	if err != nil || pod.Spec.NodeName == "" {
		return nil //nolint:nilerr // not cached or not scheduled: a later observation labels it
	}
	node, err := c.nodes.Labels(ctx, tc, pod.Spec.NodeName)
	if err != nil {
		return err
	}
	want := ServerLabels(node, locations)
	if len(want) == 0 {
		return nil
	}
	info, err := c.tidb.GetInfo(ctx, tc.Namespace, tc.Name, podName, ClientOptions(tc))
	if err != nil {
		return err
	}
	set := store.Differs(info.Labels, want)
	if len(set) == 0 {
		return nil
	}
	if err := setter.SetLabels(ctx, tc.Namespace, tc.Name, podName, ClientOptions(tc), set); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("TiDB server labels set", "pod", podName, "labels", set)
	return nil
}

// ServerLabels are a TiDB server's labels on a node: the node's values of
// PD's location-labels (with the region/zone/host fallbacks of store
// labels), and "zone" from whichever zone key the locations name.
func ServerLabels(node map[string]string, locations []string) map[string]string {
	want := store.NodeLabels(node, locations)
	if _, ok := want["zone"]; !ok {
		for _, k := range store.ZoneKeys {
			if v, ok := want[k]; ok {
				want["zone"] = v
				break
			}
		}
	}
	return want
}

// takesServerLabels reports whether tc's TiDB version takes server labels;
// a version that does not parse (latest, nightly, a digest) counts as new.
func takesServerLabels(tc *v1alpha1.TidbCluster) bool {
	v := strings.TrimPrefix(defaulting.NewComponentAccessor(tc, defaulting.ComponentTiDB).Version(), "v")
	parts := strings.SplitN(v, ".", 3)
	major, err := strconv.Atoi(parts[0])
	if err != nil {
		return true
	}
	minor := 0
	if len(parts) > 1 {
		if minor, err = strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })); err != nil {
			return true
		}
	}
	return major > serverLabelsSince[0] || major == serverLabelsSince[0] && minor >= serverLabelsSince[1]
}
