package component

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/planner"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// AnnTemplateHash records on the StatefulSet the hash of the pod template
// the operator last applied, so a template change is seen before the
// StatefulSet controller computes a new revision.
const AnnTemplateHash = "tidb.kubetidb.io/template-hash"

// failover lets the component record failed members and recover them;
// the failure records raise the desired replicas the planner works toward.
func (m *Manager[O]) failover(ctx context.Context, st *syncState[O]) error {
	if f, ok := m.comp.(FailoverHandler[O]); ok {
		return f.Failover(ctx, st.tc)
	}
	return nil
}

// failoverReplicas is the number of extra pods the failure records ask for.
func (m *Manager[O]) failoverReplicas(tc O) int32 {
	if f, ok := m.comp.(FailoverHandler[O]); ok {
		return f.FailoverReplicas(tc)
	}
	return 0
}

// lifecycle asks the planner for the one next action and carries it out
// through the component's hooks: scale out, scale in (after PreScaleIn
// released the ordinal), restart one pod (after PreUpgradePod), or wait.
func (m *Manager[O]) lifecycle(ctx context.Context, st *syncState[O]) error {
	tc, live := st.tc, st.live
	pods, err := m.podsByOrdinal(st)
	if err != nil {
		return err
	}
	templateChanged := live.Annotations[AnnTemplateHash] != st.desired.Annotations[AnnTemplateHash]
	observed := m.observePlan(tc, live, pods, templateChanged)
	observed.Desired += m.spareReplicas(ctx, tc, pods) // volume replacement (volumereplace.go)
	// observe computed the phase from the StatefulSet as it was before this
	// sync applies a new template: a rollout about to start is an Upgrade
	// already, or the status would call the new generation rolled out.
	if status := m.comp.Status(tc); observed.Rolling && status.Phase == v1alpha1.NormalPhase {
		status.Phase = v1alpha1.UpgradePhase
	}
	action := planner.Plan(observed)
	logger := klog.FromContext(ctx)
	if action.Kind != planner.Nothing {
		logger.V(2).Info("planned", "action", action.Kind, "ordinal", action.Ordinal, "reason", action.Reason)
	}
	if err := m.postUpgrade(ctx, st, observed); err != nil {
		m.comp.Status(tc).Phase = v1alpha1.UpgradePhase // not done until the component undid its preparation
		return err
	}
	if err := m.guardDeletingVolumes(st, observed, action); err != nil {
		return err
	}
	if err := m.endRollout(ctx, st, observed); err != nil {
		return err
	}
	switch action.Kind {
	case planner.Wait:
		return flow.Requeue("%s", action.Reason)
	case planner.ScaleOut:
		if err := m.dropStalePVCs(ctx, tc, observed.Replicas, action.Replicas); err != nil {
			return err
		}
	case planner.ScaleIn:
		kept, err := m.scaleIn(ctx, tc, observed.Replicas, action.Ordinal)
		if err != nil {
			return err
		}
		action.Replicas, action.Partition = kept, min(action.Partition, kept)
	case planner.UpgradePod:
		if err := m.beginRollout(ctx, st, action.Ordinal); err != nil {
			return err
		}
		if p, ok := m.comp.(UpgradePreparer[O]); ok {
			if err := p.PreUpgradePod(ctx, tc, action.Ordinal); err != nil {
				return err
			}
		}
	}
	setReplicas(st.desired, action.Replicas, partitioned(m.comp))
	if ru := st.desired.Spec.UpdateStrategy.RollingUpdate; ru != nil && partitioned(m.comp) {
		p := action.Partition
		ru.Partition = &p
	}
	return nil
}

// observePlan turns what was observed into the planner's input.
func (m *Manager[O]) observePlan(tc O, live *appsv1.StatefulSet, pods map[int32]*corev1.Pod, templateChanged bool) planner.Component {
	replicas := *live.Spec.Replicas
	c := planner.Component{
		Desired:      m.comp.Replicas(tc) + m.failoverReplicas(tc),
		Replicas:     replicas,
		Partition:    replicas,
		Rolling:      templateChanged || upgrading(live),
		Pods:         map[int32]planner.Pod{},
		ScaleOutStep: 1,
		ScaleInStep:  1,
		BlockedBy:    m.upgradeBlocker(tc),
	}
	if s, ok := m.comp.(ScaleOutStepper[O]); ok {
		c.ScaleOutStep = s.ScaleOutStep(tc)
	}
	if s, ok := m.comp.(ScaleInStepper[O]); ok {
		c.ScaleInStep = s.ScaleInStep(tc)
	}
	// A component with its own force rule (PD: only while PD cannot answer,
	// spec §6.1) never gets the generic one, which could restart healthy
	// members of a PD that still has a quorum.
	if f, ok := m.comp.(ForceUpgrader[O]); ok {
		c.Force = f.ForceUpgrade(tc)
	} else {
		c.ForceIfOldDown = m.owner.ForceIfOldDown(tc)
	}
	health, _ := m.comp.(HealthChecker[O])
	// Unpartitioned, the planner sees every old pod as not yet restarting
	// (partition = replicas): its one restart applies the template, and the
	// StatefulSet controller then restarts the pods, the planner waiting on
	// each as it would.
	if ru := live.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && partitioned(m.comp) {
		c.Partition = *ru.Partition
	}
	for o := int32(0); o < replicas; o++ {
		p, ok := pods[o]
		if !ok {
			c.Pods[o] = planner.Pod{}
			continue
		}
		updated := live.Status.UpdateRevision == "" || p.Labels[appsv1.ControllerRevisionHashLabelKey] == live.Status.UpdateRevision
		c.Pods[o] = planner.Pod{
			Exists:  true,
			Ready:   PodReady(p),
			Updated: updated,
			Healthy: (health == nil || health.PodHealthy(tc, p.Name)) && (!c.Rolling || !updated || m.readyLongEnough(tc, p)),
		}
	}
	if templateChanged {
		staleRevisions(c.Pods)
	}
	return c
}

// staleRevisions handles a template not applied yet: the StatefulSet's
// update revision still names the old template, so every pod looks
// updated. That is harmless while all pods are available (the planner
// then applies the template without restarting any), but a pod that is
// down would be taken for a restarted pod that failed, and the rollout
// that could fix it (or force-upgrade) would never start; so while a pod
// is down, no pod counts as updated.
func staleRevisions(pods map[int32]planner.Pod) {
	for _, p := range pods {
		if !p.Available() {
			for o, q := range pods {
				q.Updated = false
				pods[o] = q
			}
			return
		}
	}
}

// postUpgrade lets the component undo its preparation for restarted pods
// that are available again: while a rollout is in progress, and on the
// first sync after it ended (the last pod's restart ends the rollout), when
// EndUpgrade then sweeps what an unavailable pod's restart left behind.
func (m *Manager[O]) postUpgrade(ctx context.Context, st *syncState[O], c planner.Component) error {
	if !c.Rolling && st.prevPhase != v1alpha1.UpgradePhase {
		return nil
	}
	if undo, ok := m.comp.(UpgradeUndoer[O]); ok {
		for o, p := range c.Pods {
			if p.Updated && p.Available() && (o >= c.Partition || !c.Rolling) {
				if err := undo.PostUpgradePod(ctx, st.tc, o); err != nil {
					return err
				}
			}
		}
	}
	if f, ok := m.comp.(UpgradeFinisher[O]); ok && !c.Rolling {
		return f.EndUpgrade(ctx, st.tc)
	}
	return nil
}

// scaleIn prepares the removal of the ordinals first..replicas-1 in this
// one sync, highest first, so that several stores drain at once
// (scaleInParallelism), and returns the replicas the StatefulSet may
// shrink to: below the released ordinals, from the highest down without a
// gap (a released ordinal under one still held stays). Their PVCs are
// marked for deferred deletion. With nothing released it returns the first
// ordinal's wait or error; with some released, the others come back by a
// revisit that does not hold the components after this one.
func (m *Manager[O]) scaleIn(ctx context.Context, tc O, replicas, first int32) (int32, error) {
	kept := replicas
	var held error
	for o := replicas - 1; o >= first; o-- {
		if err := m.preScaleIn(ctx, tc, o); err != nil {
			if held == nil {
				held = err
			}
			continue
		}
		if kept == o+1 {
			kept = o
		}
	}
	if kept == replicas {
		return replicas, held
	}
	for o := kept; o < replicas; o++ {
		if err := m.deferDeletePVCs(ctx, tc, o); err != nil {
			return replicas, err
		}
	}
	if held != nil {
		flow.RevisitAfter(ctx, scaleInRevisit, "%s scale-in continues: %v", m.comp.Name(), held)
	}
	return kept, nil
}

// scaleInRevisit is how soon the removals still held after a partial
// scale-in are looked at again (a store's Tombstone takes seconds to
// minutes).
const scaleInRevisit = 10 * time.Second

// preScaleIn lets the component release the ordinal; a component without
// a ScaleInPreparer refuses to scale in unless its Traits say FreeScaleIn.
func (m *Manager[O]) preScaleIn(ctx context.Context, tc O, ordinal int32) error {
	p, ok := m.comp.(ScaleInPreparer[O])
	if !ok {
		if m.comp.Traits().FreeScaleIn {
			return nil
		}
		return flow.Requeue("scale-in is not supported for %s", m.comp.Name())
	}
	return p.PreScaleIn(ctx, tc, ordinal)
}

// annotateTemplateHash records the hash of the desired pod template.
func annotateTemplateHash(sts *appsv1.StatefulSet) error {
	hash, err := apply.Hash(sts.Spec.Template)
	if err != nil {
		return err
	}
	if sts.Annotations == nil {
		sts.Annotations = map[string]string{}
	}
	sts.Annotations[AnnTemplateHash] = hash
	return nil
}

// podsByOrdinal lists the component's pods from the cache once per sync
// (diagnose and lifecycle both read them) and keeps them in st.
func (m *Manager[O]) podsByOrdinal(st *syncState[O]) (map[int32]*corev1.Pod, error) {
	if st.pods != nil {
		return st.pods, nil
	}
	sel := labels.SelectorFromSet(m.owner.Labels(st.tc, m.comp.Name()))
	list, err := m.pods.Pods(st.tc.GetNamespace()).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	out := make(map[int32]*corev1.Pod, len(list))
	prefix := names.Member(st.tc.GetName(), m.comp.Name()) + "-"
	for _, p := range list {
		if len(p.Name) <= len(prefix) || p.Name[:len(prefix)] != prefix {
			continue
		}
		if ord, err := names.Ordinal(p.Name); err == nil {
			out[ord] = p
		}
	}
	st.pods = out
	return out, nil
}

// ForceUpgradeAsked reports whether tc carries the TiDB Operator's
// tidb.pingcap.com/force-upgrade: "true": PD's own rule reads it, and every
// other component's rollout that would wait for a pod on the old revision
// that is missing or not Ready gives up its partition instead, without the
// pre-restart hooks (planner ForceIfOldDown).
func ForceUpgradeAsked(tc metav1.Object) bool {
	return tc.GetAnnotations()[label.AnnForceUpgradeKey] == "true"
}

// forceIfOldDownAsked is ForceUpgradeAsked unless tc also asks for an
// upgrade safety gate (pd-check-quorum-before-upgrade,
// tikv-check-all-stores-up-before-upgrade): a user who asked for those
// checks is never given a rollout that skips them.
func forceIfOldDownAsked(tc metav1.Object) bool {
	return ForceUpgradeAsked(tc) && tc.GetAnnotations()[label.AnnPDCheckQuorumBeforeUpgrade] != "true" &&
		tc.GetAnnotations()[label.AnnTiKVCheckAllStoresUpBeforeUpgrade] != "true"
}

// PodReady reports whether p is Ready and not being deleted.
func PodReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
