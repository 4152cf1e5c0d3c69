package pdms

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Retirer scales to 0 the micro-services a cluster no longer runs (spec.pd.mode no longer "ms", or
// spec.pdms without the service), as the TiDB Operator does: their StatefulSets, Services and
// ConfigMaps stay, so that running them again is a scale-out. It waits until PD has rolled out, since
// PD members still started as the API service need the tso service until they restart as one service.
type Retirer struct {
	sts    appslisters.StatefulSetLister
	writer *apply.Applier
}

// NewRetirer returns the step, run after PD, over env's caches and write layer.
func NewRetirer(env *component.Env) *Retirer {
	return &Retirer{sts: env.StatefulSets, writer: env.Writer}
}

// Name labels metrics and logs.
func (r *Retirer) Name() string { return "pdms_retire" }

// Sync scales each retired service's StatefulSet of tc to 0 once PD's StatefulSet runs its update
// revision on every pod. It does nothing for a paused cluster and errors when a write fails.
func (r *Retirer) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if tc.Spec.Paused || r.sts == nil || !pdRolledOut(tc) {
		return nil
	}
	for _, svc := range []string{names.TSO, names.Scheduling} {
		if pd.MicroServices(tc) && spec(tc, svc) != nil {
			continue
		}
		live, err := r.sts.StatefulSets(tc.Namespace).Get(names.Member(tc.Name, svc))
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get StatefulSet of %s: %w", svc, err)
		}
		if !metav1.IsControlledBy(live, tc) || live.Spec.Replicas == nil || *live.Spec.Replicas == 0 {
			continue
		}
		if err := r.writer.ScaleStatefulSet(ctx, tc, live.Name, 0, "PD no longer runs the "+svc+" micro-service"); err != nil {
			return err
		}
	}
	return nil
}

// pdRolledOut reports whether PD (when the cluster has one) is Normal with every pod on its update
// revision, as this sync observed it.
func pdRolledOut(tc *v1alpha1.TidbCluster) bool {
	if tc.Spec.PD == nil {
		return true
	}
	st := tc.Status.PD.StatefulSet
	return tc.Status.PD.Phase == v1alpha1.NormalPhase && st != nil && st.CurrentRevision == st.UpdateRevision &&
		st.UpdatedReplicas == st.Replicas
}
