package tidb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// Event reasons of TiDB's smooth upgrade (Normal).
const (
	// ReasonSmoothUpgradeStarted: TiDB paused user DDL before the first server restarts onto a new version.
	ReasonSmoothUpgradeStarted = "SmoothUpgradeStarted"
	// ReasonSmoothUpgradeFinished: every server runs the new version; user DDL resumed.
	ReasonSmoothUpgradeFinished = "SmoothUpgradeFinished"
)

// finishRetry is how soon a smooth upgrade whose finish failed is tried again.
const finishRetry = 10 * time.Second

// BeginRollout starts TiDB's smooth upgrade before a server restarts onto
// another version (spec §6.2): when the restarting pod's image tag and the
// desired one form a pair TiDB switches by API (switchControlled), it asks
// the healthy server of the lowest ordinal for `POST /upgrade/start` and
// then records the pause on the TidbCluster (label.SmoothUpgradeAnnotations)
// through the write layer. A pause already recorded for this pair is kept
// (a later restart, or an operator restart); one recorded for another pair
// is finished first and the restart waits for the next sync. A restart
// that changes no version, or a pair TiDB does not switch, goes on at
// once. A failed start is returned and nothing restarts. When the pod is
// missing (nil), the source version is the one the other servers still
// run (runningVersion); with none on another version nothing is paused.
func (c *Component) BeginRollout(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod, desired *appsv1.StatefulSet) error {
	target := imageTag(containerImage(desired.Spec.Template.Spec.Containers))
	source := ""
	if pod != nil {
		source = imageTag(containerImage(pod.Spec.Containers))
	} else {
		source = c.runningVersion(tc, target)
	}
	if source == "" || target == "" || source == target {
		return nil
	}
	if tc.Annotations[label.AnnSmoothUpgradeDDLPaused] == "true" {
		if tc.Annotations[label.AnnSmoothUpgradeSourceVersion] == source && tc.Annotations[label.AnnSmoothUpgradeTargetVersion] == target {
			return nil
		}
		if err := c.finishSmoothUpgrade(ctx, tc); err != nil {
			return fmt.Errorf("finish the smooth upgrade left from another version pair: %w", err)
		}
		return flow.Requeue("finished the smooth upgrade of another version pair; starting %s → %s next", source, target)
	}
	if !switchControlled(source, target) {
		klog.FromContext(ctx).V(2).Info("TiDB smooth upgrade not switched by API for this version pair", "source", source, "target", target)
		return nil
	}
	switcher, server, err := c.upgradeSwitch(tc)
	if err != nil {
		return err
	}
	if err := switcher.StartUpgrade(ctx, tc.Namespace, tc.Name, server, ClientOptions(tc)); err != nil {
		return fmt.Errorf("start TiDB smooth upgrade %s → %s: %w", source, target, err)
	}
	if err := c.writer.AnnotateTidbCluster(ctx, tc, map[string]string{
		label.AnnSmoothUpgradeDDLPaused: "true", label.AnnSmoothUpgradeSourceVersion: source,
		label.AnnSmoothUpgradeTargetVersion: target, label.AnnSmoothUpgradeStartedAt: c.clock.Now().UTC().Format(time.RFC3339),
	}); err != nil {
		return fmt.Errorf("record the TiDB smooth upgrade: %w", err)
	}
	c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonSmoothUpgradeStarted,
		"TiDB smooth upgrade %s → %s started through %s: user DDL is paused until every server runs %s", source, target, server, target)
	return nil
}

// runningVersion is the image tag of the lowest-ordinal TiDB pod in the
// cache whose tag is not target: a version the cluster still runs while
// the rollout restarts a missing pod ("" when every pod runs target, none
// exists, or there is no pod cache).
func (c *Component) runningVersion(tc *v1alpha1.TidbCluster, target string) string {
	if c.pods == nil {
		return ""
	}
	n := tc.Spec.TiDB.Replicas
	if sts := tc.Status.TiDB.StatefulSet; sts != nil {
		n = max(n, sts.Replicas)
	}
	for o := int32(0); o < n; o++ {
		p, err := c.pods.Pods(tc.Namespace).Get(names.Pod(tc.Name, names.TiDB, o))
		if err != nil {
			continue // missing: it starts on the desired template
		}
		if tag := imageTag(containerImage(p.Spec.Containers)); tag != "" && tag != target {
			return tag
		}
	}
	return ""
}

// EndRollout finishes a smooth upgrade the TidbCluster records once every
// TiDB server runs the new revision and is available: `POST
// /upgrade/finish` on the healthy server of the lowest ordinal, then the
// annotations are removed. Without the record it does nothing. A failure
// keeps the record and asks for another look (flow.RevisitAfter) rather
// than holding the components after TiDB.
func (c *Component) EndRollout(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if tc.Annotations[label.AnnSmoothUpgradeDDLPaused] != "true" {
		return nil
	}
	if err := c.finishSmoothUpgrade(ctx, tc); err != nil {
		flow.RevisitAfter(ctx, finishRetry, "TiDB smooth upgrade not finished yet: %v", err)
	}
	return nil
}

func (c *Component) finishSmoothUpgrade(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	switcher, server, err := c.upgradeSwitch(tc)
	if err != nil {
		return err
	}
	if err := switcher.FinishUpgrade(ctx, tc.Namespace, tc.Name, server, ClientOptions(tc)); err != nil {
		return err
	}
	source, target := tc.Annotations[label.AnnSmoothUpgradeSourceVersion], tc.Annotations[label.AnnSmoothUpgradeTargetVersion]
	if err := c.writer.AnnotateTidbCluster(ctx, tc, nil, label.SmoothUpgradeAnnotations...); err != nil {
		return fmt.Errorf("clear the TiDB smooth upgrade record: %w", err)
	}
	c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonSmoothUpgradeFinished,
		"TiDB smooth upgrade %s → %s finished through %s: user DDL resumes", source, target, server)
	return nil
}

// upgradeSwitch returns the client that switches the smooth upgrade and the
// healthy TiDB server of the lowest ordinal to ask; it waits while none is
// healthy.
func (c *Component) upgradeSwitch(tc *v1alpha1.TidbCluster) (tidbapi.UpgradeSwitch, string, error) {
	switcher, ok := c.tidb.(tidbapi.UpgradeSwitch)
	if !ok {
		return nil, "", fmt.Errorf("the TiDB client cannot switch the smooth upgrade")
	}
	server, lowest := "", int32(-1)
	for name, m := range tc.Status.TiDB.Members {
		o, err := names.Ordinal(name)
		if err != nil || !m.Health || (lowest >= 0 && o >= lowest) {
			continue
		}
		server, lowest = name, o
	}
	if server == "" {
		return nil, "", flow.Requeue("no healthy TiDB server to switch the smooth upgrade through")
	}
	return switcher, server, nil
}

// switchControlled reports whether TiDB pauses user DDL for the upgrade
// from source to target only when asked through `/upgrade/start` (the
// TiDB Operator's matrix): both in [v7.1.2, v7.2.0), or a source in that
// range or ≥ v7.4.0 with a target ≥ v7.4.0. Other pairs upgrade by
// themselves (v7.1.0 – v7.3.0) or not smoothly at all, and a tag that is
// no version (a custom build) is never switched.
func switchControlled(source, target string) bool {
	s, ok1 := parseVersion(source)
	t, ok2 := parseVersion(target)
	if !ok1 || !ok2 {
		return false
	}
	in712 := func(v [3]int) bool { return !less(v, [3]int{7, 1, 2}) && less(v, [3]int{7, 2, 0}) }
	from740 := func(v [3]int) bool { return !less(v, [3]int{7, 4, 0}) }
	return (in712(s) && in712(t)) || ((in712(s) || from740(s)) && from740(t))
}

// parseVersion reads "vMAJOR.MINOR.PATCH", ignoring a pre-release or build
// suffix ("-…", "+…").
func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	core, ok := strings.CutPrefix(v, "v")
	if !ok {
		return out, false
	}
	if i := strings.IndexAny(core, "-+"); i >= 0 {
		core = core[:i]
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// containerImage is the image of the tidb container.
func containerImage(containers []corev1.Container) string {
	for _, c := range containers {
		if c.Name == containerTiDB {
			return c.Image
		}
	}
	return ""
}

// imageTag is the tag of image ("" for a digest or no tag).
func imageTag(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || i < strings.LastIndex(image, "/") {
		return ""
	}
	return image[i+1:]
}
