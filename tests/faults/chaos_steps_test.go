//go:build integration

package faults

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// chaosCluster runs one cluster's plan and counts what it did.
type chaosCluster struct {
	s           *sc
	rbacApplied bool
	done        int           // steps run to their end
	converged   int           // convergence checks passed (after each step and quiet period, and the initial one)
	quietFor    time.Duration // time spent in quiet periods (paced runs)
	actions     map[chaosAction]int
	faults      map[chaosFault]int
}

// run runs each step: the action starts, the fault breaks it, the action ends, and the quiet period
// after must end in convergence, then the step's own checks run.
//
// With paced set (make chaos, not make test's slice) step i starts no earlier than i×chaosStepTime
// after the first and the run ends no earlier than len(plan)×chaosStepTime, so it lasts at least
// its DURATION: the time left of a step's slot is a quiet
// period with no action and no fault, and the cluster must still be converged at its end.
func (cc *chaosCluster) run(plan []chaosStep, paced bool) {
	begin := time.Now()
	for i, st := range plan {
		if paced && i > 0 {
			cc.quiet(begin.Add(time.Duration(i) * chaosStepTime))
		}
		cc.s.t.Logf("chaos step %s", st)
		cc.step(st)
		cc.s.waitConverged("converged after step " + st.String())
		cc.converged++
		cc.verify(st)
		cc.actions[st.action]++
		cc.faults[st.fault]++
		cc.done++
	}
	if paced {
		cc.quiet(begin.Add(time.Duration(len(plan)) * chaosStepTime))
	}
}

// quiet leaves the cluster alone until the deadline (the checker still watches it), then checks it is
// still converged: nothing drifts, flaps or is rewritten into a different state while no one acts.
func (cc *chaosCluster) quiet(until time.Time) {
	wait := time.Until(until)
	if wait <= 0 {
		return
	}
	cc.quietFor += wait
	select {
	case <-time.After(wait):
	case <-cc.s.env.Ctx.Done():
		return
	}
	if ok, why := cc.s.converged(cc.s.env.Ctx); !ok {
		cc.s.t.Fatalf("no longer converged after a quiet period of %s: %s", wait.Round(time.Second), why)
	}
	cc.converged++
}

func (cc *chaosCluster) step(st chaosStep) {
	s := cc.s
	switch st.action {
	case actScalePD:
		s.patch(map[string]any{"pd": map[string]any{"replicas": st.to}})
	case actScaleTiKV:
		s.patch(map[string]any{"tikv": map[string]any{"replicas": st.to}})
	case actScaleTiDB:
		s.patch(map[string]any{"tidb": map[string]any{"replicas": st.to}})
	case actUpgrade:
		s.patch(map[string]any{"version": st.value})
	case actConfig:
		s.patch(map[string]any{"tikv": map[string]any{"config": map[string]any{"log-level": st.value}}})
	case actPause:
		cc.pauseResume(st)
		return
	case actRecreate:
		cc.recreate()
		cc.breakWith(st)
		return
	case actBackup:
		cc.backup(st)
		return
	}
	s.waitOperatorRequests(st.after, false, "the operator works on the change")
	cc.breakWith(st)
}

// breakWith applies the step's fault and ends it once the operator (or the cluster) has met it.
func (cc *chaosCluster) breakWith(st chaosStep) {
	s := cc.s
	switch st.fault {
	case fltNone, fltJobPodDeleted: // the Job's pod is the backup's own business
	case fltKill:
		s.restartManager()
	case fltPodDeleted:
		cc.deletePod(st.target)
	default:
		f := chaosPDFault(st.fault)
		f.on(s)
		f.observed(s)
		f.off(s)
	}
}

// chaosPDFault is the suite's PD fault of that name (pdfault_test.go).
func chaosPDFault(f chaosFault) pdFault {
	for _, pf := range pdFaults() {
		if "pd-"+pf.name == string(f) {
			return pf
		}
	}
	panic("no PD fault " + f)
}

// deletePod deletes pod, as a user or a node drain would, and waits until the StatefulSet
// controller has recreated it.
func (cc *chaosCluster) deletePod(name string) {
	s := cc.s
	pods := s.env.Kube.CoreV1().Pods(s.env.Namespace)
	old, err := pods.Get(s.env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", name, err)
	}
	if err := pods.Delete(s.env.Ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Fatalf("delete pod %s: %v", name, err)
	}
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "pod "+name+" recreated", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			framework.Observef(ctx, "get: %v", err)
			return false, nil
		}
		framework.Observef(ctx, "uid %s phase %s", p.UID, p.Status.Phase)
		return p.UID != old.UID, nil
	})
}

// pauseResume pauses the cluster, changes TiDB's replicas, applies the fault, checks that the
// operator wrote nothing to the TiDB StatefulSet meanwhile, and resumes.
func (cc *chaosCluster) pauseResume(st chaosStep) {
	s := cc.s
	before := s.stsReplicas("tidb")
	s.patch(map[string]any{"paused": true})
	s.waitTC("the operator sees the cluster paused", func(tc *v1alpha1.TidbCluster) bool {
		return tc.Status.ObservedGeneration == tc.Generation
	})
	s.patch(map[string]any{"tidb": map[string]any{"replicas": st.to}})
	cc.breakWith(st)
	s.waitTC("the operator observes the change while paused", func(tc *v1alpha1.TidbCluster) bool {
		return tc.Status.ObservedGeneration == tc.Generation
	})
	if got := s.stsReplicas("tidb"); got != before {
		s.t.Errorf("paused cluster: TiDB StatefulSet replicas %d, want %d kept until resumed", got, before)
	}
	s.patch(map[string]any{"paused": false})
}

// stsReplicas is the component StatefulSet's spec.replicas.
func (s *sc) stsReplicas(component string) int32 {
	s.t.Helper()
	sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(s.env.Ctx, "basic-"+component, metav1.GetOptions{})
	if err != nil || sts.Spec.Replicas == nil {
		s.t.Fatalf("StatefulSet basic-%s: %v", component, err)
	}
	return *sts.Spec.Replicas
}

// recreate deletes the TidbCluster (its volumes are retained) and creates it again with the same
// spec. The user's deletion removes every pod at once: the pod and PVC invariants are excused
// (counted, not judged) from the delete until the checker's cache holds the new StatefulSets.
func (cc *chaosCluster) recreate() {
	s := cc.s
	tcs := s.pc.PingcapV1alpha1().TidbClusters(s.env.Namespace)
	old, err := s.tc(s.env.Ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	restore := s.chk.excuseWhile(invPDQuorum, invTiKVTombstone, invTiKVOthersUp, invPVCKept, invNoRestartOnTerminatingPVC)
	defer restore()
	if err := tcs.Delete(s.env.Ctx, "basic", metav1.DeleteOptions{}); err != nil {
		s.t.Fatalf("delete TidbCluster: %v", err)
	}
	framework.WaitFor(s.t, s.env.Ctx, readyTimeout, "the TidbCluster and its pods gone", func(ctx context.Context) (bool, error) {
		_, err := s.tc(ctx)
		pods, lerr := s.env.Kube.CoreV1().Pods(s.env.Namespace).List(ctx, metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/instance=basic,app.kubernetes.io/component in (pd,tikv,tidb)"})
		if lerr != nil {
			return false, nil
		}
		framework.Observef(ctx, "get: %v, %d pods", err, len(pods.Items))
		return apierrors.IsNotFound(err) && len(pods.Items) == 0, nil
	})
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Labels: old.Labels, Annotations: old.Annotations}, Spec: old.Spec}
	if _, err := tcs.Create(s.env.Ctx, tc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create TidbCluster again: %v", err)
	}
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "the checker sees the new StatefulSets", func(ctx context.Context) (bool, error) {
		return s.chk.replicas("pd") > 0 && s.chk.replicas("tikv") > 0, nil
	})
}

// backup runs a Backup to S3: its Job created, the fault (the Job's pod deleted among others), the
// Job completed by KWOK and the backup-manager's Complete written; job-once judges every Job.
//
// The backup Job has backoffLimit 0, so a deleted pod that had started fails the Job (whether it had
// depends on timing; the first 10-minute chaos run met it): the Backup is retried under its
// backoffRetryPolicy, which the operator must do with a new Job only once the failed one is Failed.
func (cc *chaosCluster) backup(st chaosStep) {
	s := cc.s
	if !cc.rbacApplied {
		s.applyBackupRBAC()
		cc.rbacApplied = true
	}
	s.startBackup(st.value, func(b *v1alpha1.Backup) {
		b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "2s", MaxRetryTimes: 2, RetryTimeout: "10m"}
	})
	s.waitJob("backup-"+st.value, nil)
	if st.fault == fltJobPodDeleted {
		s.deleteJobPods("backup-" + st.value)
	}
	cc.breakWith(st)
	s.waitJob("backup-"+st.value, jobComplete)
	s.completeBackup(st.value)
}

// verify runs the step's own checks once the cluster converged.
func (cc *chaosCluster) verify(st chaosStep) {
	s := cc.s
	tc, err := s.tc(s.env.Ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	expectMembers(s, int(tc.Spec.PD.Replicas))
	expectUpStores(s, int(tc.Spec.TiKV.Replicas))
	if st.action == actUpgrade {
		for _, c := range []string{"pd", "tikv", "tidb"} {
			s.expectImages(c, st.value)
		}
	}
	if st.action == actPause && tc.Spec.Paused {
		s.t.Errorf("still paused after resume")
	}
}
