package tiflash

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tiflashapi"
)

// PostUpgradePod holds the rollout until the restarted pod's store reports
// Running on /tiflash/store-status (TiFlash ≥ v5.1.2; older ones do not
// serve it). Its store being Up is PodHealthy's part.
func (c *Component) PostUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if c.tiflash == nil || !servesStoreStatus(tc) {
		return nil
	}
	pod := names.Pod(tc.Name, names.TiFlash, ordinal)
	opts := tiflashapi.Options{TLSEnabled: tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled, ClusterDomain: tc.Spec.ClusterDomain}
	status, err := c.tiflash.GetStoreStatus(ctx, tc.Namespace, tc.Name, pod, opts)
	switch {
	case errors.Is(err, tiflashapi.ErrStoreStatusNotServed):
		return nil
	case err != nil:
		return flow.Requeue("waiting for TiFlash %s to report its store status: %v", pod, err)
	case status != tiflashapi.StoreStatusRunning:
		return flow.Requeue("waiting for TiFlash %s store to be Running, it is %s", pod, status)
	}
	return nil
}

// servesStoreStatus reports whether tc's TiFlash version serves the
// store-status API (v5.1.2 and later; a tag that is not a version counts
// as recent).
func servesStoreStatus(tc *v1alpha1.TidbCluster) bool {
	image := defaulting.NewComponentAccessor(tc, defaulting.Component(names.TiFlash)).Image()
	tag := image[strings.LastIndexByte(image, ':')+1:]
	v := strings.SplitN(strings.TrimPrefix(tag, "v"), ".", 3)
	if len(v) < 3 {
		return true
	}
	var n [3]int
	for i, part := range v {
		digits := strings.TrimRightFunc(part, func(r rune) bool { return r < '0' || r > '9' })
		if i == 2 {
			digits, _, _ = strings.Cut(part, "-")
		}
		x, err := strconv.Atoi(digits)
		if err != nil {
			return true
		}
		n[i] = x
	}
	return n[0] > 5 || (n[0] == 5 && (n[1] > 1 || (n[1] == 1 && n[2] >= 2)))
}
