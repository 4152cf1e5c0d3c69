package tiflash

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// placementRetry is how soon a sync looks again at placement rules PD
// refused to turn on because no TiKV store had registered yet.
const placementRetry = 10 * time.Second

// PreCreate turns PD's placement rules on, which a TiFlash store needs to
// register, before the StatefulSet is first created. A PD that has no TiKV
// store yet refuses the change (500 ErrNotBootstrapped) and keeps refusing
// until TiKV — synced after TiFlash — registers, so then the StatefulSet is
// created anyway and FinishCreate turns the rules on later, as the TiDB
// Operator goes on past that error. It errors (the sync is retried) while
// PD cannot be read or refuses for another reason.
func (c *Component) PreCreate(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	done, err := c.enablePlacementRules(ctx, tc)
	if err != nil || done {
		return err
	}
	klog.FromContext(ctx).Info("PD turns placement rules on only after the first TiKV store registers; creating TiFlash now and turning them on then")
	return nil
}

// FinishCreate turns PD's placement rules on once PD accepts it (its first
// TiKV store registered), while a TiFlash pod has no store yet. Once every
// pod's store registered — which PD allows only with placement rules on —
// it makes no request. While PD still refuses it names the wait in the
// conditions and asks for another look.
func (c *Component) FinishCreate(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if c.storesRegistered(tc) {
		return nil
	}
	done, err := c.enablePlacementRules(ctx, tc)
	if err != nil {
		return err
	}
	if !done {
		flow.AddBlocker(ctx, "TiFlash stores register once PD's placement rules are on; PD turns them on after the first TiKV store registers")
		flow.RevisitAfter(ctx, placementRetry, "turn PD's placement rules on for TiFlash")
	}
	return nil
}

// enablePlacementRules reads PD's replication config and turns placement
// rules on when they are off. It reports false, with no error, when PD
// refused because no TiKV store registered yet.
func (c *Component) enablePlacementRules(ctx context.Context, tc *v1alpha1.TidbCluster) (bool, error) {
	client := c.Client(tc)
	cfg, err := client.GetConfig(ctx)
	if err != nil {
		return false, fmt.Errorf("read PD config for TiFlash: %w", err)
	}
	if cfg.Replication.EnablePlacementRules {
		return true, nil
	}
	err = client.EnablePlacementRules(ctx)
	switch {
	case errors.Is(err, pdapi.ErrTiKVNotBootstrapped):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("enable PD placement rules for TiFlash: %w", err)
	}
	klog.FromContext(ctx).Info("turned PD's placement rules on for TiFlash")
	return true, nil
}

// storesRegistered reports whether the pod of every wanted ordinal has a
// store that is not Tombstone in the status PD last reported.
func (c *Component) storesRegistered(tc *v1alpha1.TidbCluster) bool {
	for i := int32(0); i < tc.Spec.TiFlash.Replicas; i++ {
		pod := names.Pod(tc.Name, names.TiFlash, i)
		if _, ok := c.Of(tc, pod); !ok {
			return false
		}
	}
	return true
}
