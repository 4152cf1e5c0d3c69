package component

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Manager runs the skeleton for one component owned by an O. A
// Manager[*v1alpha1.TidbCluster] is a Member of the TidbCluster sync and
// reports the component to the controller's conditions, metrics and render
// through Component.
type Manager[O Owner] struct {
	comp     Component[O]
	owner    OwnerSettings[O]
	writer   *apply.Applier
	sts      appslisters.StatefulSetLister
	pods     corelisters.PodLister
	cms      corelisters.ConfigMapLister
	pvcs     corelisters.PersistentVolumeClaimLister
	kube     kubernetes.Interface
	clock    clock.PassiveClock
	recorder record.EventRecorder
	peers    *Peers
	// volumeModifying is the VolumeModifying feature gate (volumeattrs.go).
	volumeModifying bool
	// storageClassesDenied: no StorageClass may be read, so no PVC grows.
	storageClassesDenied bool
	// liveChecked: the versions whose update rules last passed (transition.go).
	liveChecked liveChecks
}

// NewManager returns the skeleton for a TidbCluster's comp over env's
// write layer and caches, and registers comp in env.Peers.
func NewManager(comp Component[*v1alpha1.TidbCluster], env *Env) *Manager[*v1alpha1.TidbCluster] {
	return NewOwnedManager(comp, TidbClusterSettings{}, env)
}

// NewOwnedManager returns the skeleton for comp of an owner of kind O,
// whose cluster-level fields settings reads, over env's write layer and
// caches, and registers comp in env.Peers.
func NewOwnedManager[O Owner](comp Component[O], settings OwnerSettings[O], env *Env) *Manager[O] {
	if env.Peers == nil {
		env.Peers = &Peers{}
	}
	env.Peers.Add(comp)
	return &Manager[O]{comp: comp, owner: settings, writer: env.Writer,
		sts: env.StatefulSets, pods: env.Pods, cms: env.ConfigMaps,
		pvcs: env.PVCs, kube: env.Kube, clock: env.Clock, recorder: env.Recorder, peers: env.Peers,
		volumeModifying: env.VolumeModifying, storageClassesDenied: env.StorageClassesDenied}
}

// Name is the component's name.
func (m *Manager[O]) Name() string { return m.comp.Name() }

// Component is the component the skeleton runs.
func (m *Manager[O]) Component() Component[O] { return m.comp }

// syncState carries what one sync learned from step to step.
type syncState[O Owner] struct {
	tc        O
	live      *appsv1.StatefulSet // nil until created
	configMap string
	desired   *appsv1.StatefulSet
	prevPhase v1alpha1.MemberPhase  // the phase the last written status reported
	pods      map[int32]*corev1.Pod // by ordinal, listed once per sync (podsByOrdinal)
}

// errStop ends a component's sync early without an error (paused cluster).
var errStop = errors.New("stop")

type step[O Owner] struct {
	name string
	run  func(ctx context.Context, st *syncState[O]) error
}

func (m *Manager[O]) steps() []step[O] {
	return []step[O]{
		{"observe", m.observe},
		{"pause", m.pauseGuard},
		{"suspend", m.suspend},
		{"diagnose", m.diagnose},
		{"dependencies", m.gate},
		{"services", m.syncServices},
		{"configmap", m.syncConfigMap},
		{"build", m.build},
		{"takeover", m.takeover},
		{"create", m.createIfMissing},
		{"finish create", m.finishCreate},
		{"maintenance", m.maintain},
		{"volume replace", m.replaceVolumes},
		{"failover", m.failover},
		{"scale and upgrade", m.lifecycle},
		{"apply", m.apply},
		{"volumes", m.volumes},
	}
}

// Sync runs the steps in order for tc. A step that waits returns a
// flow.RequeueError naming the step and the reason, which ends the
// cluster's sync and lands in the Progressing condition.
func (m *Manager[O]) Sync(ctx context.Context, tc O) error {
	if !m.comp.Enabled(tc) {
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("component", m.comp.Name())
	ctx = klog.NewContext(ctx, logger)
	st := &syncState[O]{tc: tc}
	defer m.phaseEvents(st)
	for _, s := range m.steps() {
		err := s.run(ctx, st)
		if errors.Is(err, errStop) {
			logger.V(4).Info("sync stopped", "step", s.name)
			return nil
		}
		if re, waiting := flow.AsRequeue(err); waiting {
			logger.V(2).Info("waiting", "step", s.name, "reason", re.Reason)
			return &flow.RequeueError{Reason: fmt.Sprintf("%s %s: %s", m.comp.Name(), s.name, re.Reason), After: re.After}
		}
		if err != nil {
			return fmt.Errorf("%s step: %w", s.name, err)
		}
	}
	return nil
}

// Event reasons of a component's rolling update.
const (
	// ReasonRollingUpdateStarted (Normal): the component's pods begin restarting onto a new template.
	ReasonRollingUpdateStarted = "RollingUpdateStarted"
	// ReasonRollingUpdateFinished (Normal): every pod of the component runs the new template.
	ReasonRollingUpdateFinished = "RollingUpdateFinished"
)

// eventf records an event on tc when the manager has a recorder (render
// and some tests build it without one).
func (m *Manager[O]) eventf(tc O, eventType, reason, format string, args ...any) {
	if m.recorder != nil {
		m.recorder.Eventf(tc, eventType, reason, format, args...)
	}
}

// phaseEvents records the start and the end of a rolling update: the
// phase the last written status reported against the one this sync found.
func (m *Manager[O]) phaseEvents(st *syncState[O]) {
	status := m.comp.Status(st.tc)
	if status == nil || st.prevPhase == "" && st.live == nil {
		return // not observed (the first sync)
	}
	now := status.Phase
	switch {
	case st.prevPhase != v1alpha1.UpgradePhase && now == v1alpha1.UpgradePhase:
		m.eventf(st.tc, corev1.EventTypeNormal, ReasonRollingUpdateStarted, "%s rolling update started", m.comp.Name())
	case st.prevPhase == v1alpha1.UpgradePhase && now == v1alpha1.NormalPhase:
		m.eventf(st.tc, corev1.EventTypeNormal, ReasonRollingUpdateFinished, "%s rolling update finished: every pod runs the new template", m.comp.Name())
	}
}

func (m *Manager[O]) stsName(tc O) string {
	return names.Member(tc.GetName(), m.comp.Name())
}

// observe records the StatefulSet's status and image and asks the component
// to observe its members, unless the control marked the members recent and
// the StatefulSet's status is what the last sync saw; it runs even for a
// paused cluster.
func (m *Manager[O]) observe(ctx context.Context, st *syncState[O]) error {
	tc := st.tc
	live, err := m.sts.StatefulSets(tc.GetNamespace()).Get(m.stsName(tc))
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return fmt.Errorf("get StatefulSet %s: %w", m.stsName(tc), err)
	}
	st.live = live
	status := m.comp.Status(tc)
	st.prevPhase = status.Phase
	unchanged := live != nil && status.StatefulSet != nil && equality.Semantic.DeepEqual(*status.StatefulSet, live.Status)
	status.StatefulSet, status.Image = nil, ""
	if live != nil {
		status.StatefulSet = live.Status.DeepCopy()
		status.Image = mainImage(live, m.comp.Name())
	}
	// Between refreshes a converged component whose pods did not change
	// keeps the members its last sync read from PD or TiDB.
	// A suspended component's members are not observed: its stores and
	// members would turn Down while suspended, and failover would count
	// that time against them when it resumes.
	suspended := m.owner.Suspended(tc, m.comp.Name()) && (live == nil || live.DeletionTimestamp != nil)
	if unchanged && flow.RecentObservation(ctx) {
		klog.FromContext(ctx).V(4).Info("members observed recently; not asking again")
	} else if o, ok := m.comp.(Observer[O]); ok && !suspended {
		if err := o.Observe(ctx, tc, live); err != nil {
			klog.FromContext(ctx).Info("could not observe members", "err", err)
			// A client certificate that cannot be loaded (its Secret missing) is named in the conditions.
			var tlsErr *pdapi.TLSConfigError
			if errors.As(err, &tlsErr) {
				flow.AddBlocker(ctx, tlsErr.Error())
			}
		}
	}
	status.Phase = phase(m.comp.Replicas(tc)+m.failoverReplicas(tc)+m.observedSpares(ctx, st), live)
	return nil
}

func (m *Manager[O]) pauseGuard(_ context.Context, st *syncState[O]) error {
	if m.owner.Paused(st.tc) {
		return errStop
	}
	return nil
}

func (m *Manager[O]) gate(_ context.Context, st *syncState[O]) error {
	if g, ok := m.comp.(Gated[O]); ok {
		if reason := g.Gate(st.tc); reason != "" {
			return flow.Requeue("%s", reason)
		}
	}
	return nil
}

func (m *Manager[O]) syncServices(ctx context.Context, st *syncState[O]) error {
	for _, svc := range m.comp.Services(st.tc) {
		if _, err := m.writer.Service(ctx, st.tc, svc); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager[O]) build(_ context.Context, st *syncState[O]) error {
	desired, err := m.comp.StatefulSet(st.tc, st.configMap)
	if err != nil {
		return fmt.Errorf("build StatefulSet: %w", err)
	}
	replicas := m.comp.Replicas(st.tc)
	if st.live != nil && st.live.Spec.Replicas != nil {
		replicas = *st.live.Spec.Replicas // the scale step decides changes
	}
	setReplicas(desired, replicas, partitioned(m.comp))
	st.desired = desired
	return annotateTemplateHash(desired)
}

// createIfMissing creates the StatefulSet on the first sync and waits for
// its pods, because every later step needs them.
func (m *Manager[O]) createIfMissing(ctx context.Context, st *syncState[O]) error {
	if st.live != nil && st.live.DeletionTimestamp != nil {
		return flow.Requeue("StatefulSet %s is being deleted; it is created again once it is gone", st.live.Name)
	}
	if st.live != nil {
		return nil
	}
	if p, ok := m.comp.(CreatePreparer[O]); ok {
		if err := p.PreCreate(ctx, st.tc); err != nil {
			return err
		}
	}
	setReplicas(st.desired, m.comp.Replicas(st.tc), partitioned(m.comp))
	if _, err := m.writer.StatefulSet(ctx, st.tc, st.desired); err != nil {
		return err
	}
	return flow.Requeue("created StatefulSet %s; waiting for its pods", st.desired.Name)
}

// finishCreate runs the component's CreateFinisher, if any.
func (m *Manager[O]) finishCreate(ctx context.Context, st *syncState[O]) error {
	if f, ok := m.comp.(CreateFinisher[O]); ok {
		return f.FinishCreate(ctx, st.tc)
	}
	return nil
}

func (m *Manager[O]) apply(ctx context.Context, st *syncState[O]) error {
	_, err := m.writer.StatefulSet(ctx, st.tc, st.desired)
	return err
}

// setReplicas sets replicas and a RollingUpdate partition equal to them, so
// that applying a new template restarts no pod until the upgrade step
// lowers the partition. Unpartitioned (a NoPartition component) it sets
// partition 0, which is what the API server defaults a plain RollingUpdate
// to, so that the live object compares equal.
func setReplicas(sts *appsv1.StatefulSet, replicas int32, partitioned bool) {
	sts.Spec.Replicas = &replicas
	if sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return
	}
	p := replicas
	if !partitioned {
		p = 0
	}
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{
		Type:          appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: &p},
	}
}

// phase is Scale when the StatefulSet's replicas differ from the desired
// ones, Upgrade while revisions differ, else Normal.
func phase(desired int32, live *appsv1.StatefulSet) v1alpha1.MemberPhase {
	if live == nil {
		return v1alpha1.NormalPhase
	}
	if live.Spec.Replicas != nil && *live.Spec.Replicas != desired {
		return v1alpha1.ScalePhase
	}
	if upgrading(live) {
		return v1alpha1.UpgradePhase
	}
	return v1alpha1.NormalPhase
}

func upgrading(live *appsv1.StatefulSet) bool {
	s := live.Status
	return s.CurrentRevision != s.UpdateRevision ||
		(live.Generation > s.ObservedGeneration && live.Spec.Replicas != nil && *live.Spec.Replicas == s.Replicas)
}

func mainImage(sts *appsv1.StatefulSet, container string) string {
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == container {
			return c.Image
		}
	}
	return ""
}
