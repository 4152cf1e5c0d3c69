package ticdc

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// maxListAttempts bounds how many pods one sync asks for the captures list: each unreachable pod costs
// a request timeout, and any live capture answers for all.
const maxListAttempts = 3

// ClientOptions says how the operator reaches tc's TiCDC pods.
func ClientOptions(tc *v1alpha1.TidbCluster) ticdcapi.Options {
	return ticdcapi.Options{TLSEnabled: tlsEnabled(tc), ClusterDomain: tc.Spec.ClusterDomain}
}

// Observe fills status.ticdc: one capture per existing pod of the StatefulSet, from the captures list
// one reachable pod answers (its ID, whether it is the owner, ready = listed), the version from the
// capture's own /status only when its ID is new (a capture's ID changes on every restart), and synced
// when every desired capture is ready. A TiCDC without the captures API is asked pod by pod, as the TiDB
// Operator does. It never fails the sync: a TiCDC that cannot be reached leaves every capture not ready
// and synced false, and is logged. Before the StatefulSet exists the captures are cleared.
func (c *Component) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	s := &tc.Status.TiCDC
	if sts == nil {
		s.Captures, s.Synced = nil, false
		return nil
	}
	if c.cdc == nil {
		return nil
	}
	pods, ready, err := c.existingPods(tc, sts)
	if err != nil {
		s.Synced = false
		return err
	}
	old := s.Captures
	captures := make(map[string]v1alpha1.TiCDCCapture, len(pods))
	for _, p := range pods {
		captures[p] = v1alpha1.TiCDCCapture{PodName: p}
	}
	listed, _, err := c.listCaptures(ctx, tc, append(ready, pods...))
	switch {
	case errors.Is(err, ticdcapi.ErrNotServed):
		err = c.observeEach(ctx, tc, captures)
	case err == nil:
		c.fillFromList(ctx, tc, captures, listed, old)
	}
	if err != nil {
		klog.FromContext(ctx).V(2).Info("could not list the TiCDC captures", "err", err)
	}
	allReady := true
	for _, cp := range captures {
		allReady = allReady && cp.Ready
	}
	s.Synced = err == nil && allReady && len(captures) == int(tc.Spec.TiCDC.Replicas)
	s.Captures = captures
	if len(captures) == 0 {
		s.Captures = nil
	}
	return nil
}

// existingPods returns the pods of the StatefulSet's ordinals that exist, in ordinal order, and those
// of them that are Ready; without a pod lister every ordinal counts as an existing, unready pod.
func (c *Component) existingPods(tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) (all, ready []string, err error) {
	replicas := int32(0)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	for o := range replicas {
		name := names.Pod(tc.Name, names.TiCDC, o)
		if c.pods == nil {
			all = append(all, name)
			continue
		}
		pod, err := c.pods.Pods(tc.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("get pod %s: %w", name, err)
		}
		all = append(all, name)
		if component.PodReady(pod) {
			ready = append(ready, name)
		}
	}
	return all, ready, nil
}

// listCaptures asks the candidate pods in turn, at most maxListAttempts different ones, for the
// captures of tc's TiCDC and returns the first answer and the pod that gave it. An answer that TiCDC
// does not serve the API (ErrNotServed) ends the search, since every capture runs the same version
// outside a rollout. It returns the last error when no pod answered.
func (c *Component) listCaptures(ctx context.Context, tc *v1alpha1.TidbCluster, candidates []string) ([]ticdcapi.Capture, string, error) {
	err := errors.New("no TiCDC pod to ask")
	var asked []string
	for _, pod := range candidates {
		if slices.Contains(asked, pod) {
			continue
		}
		if len(asked) == maxListAttempts {
			break
		}
		asked = append(asked, pod)
		var captures []ticdcapi.Capture
		captures, err = c.cdc.GetCaptures(ctx, tc.Namespace, tc.Name, pod, ClientOptions(tc))
		if err == nil {
			return captures, pod, nil
		}
		if errors.Is(err, ticdcapi.ErrNotServed) {
			return nil, pod, err
		}
	}
	return nil, "", err
}

// fillFromList marks the captures of listed ready, with their IDs and owner, taking each version from
// old when the capture's ID did not change and from the capture's /status otherwise.
func (c *Component) fillFromList(ctx context.Context, tc *v1alpha1.TidbCluster, captures map[string]v1alpha1.TiCDCCapture,
	listed []ticdcapi.Capture, old map[string]v1alpha1.TiCDCCapture) {
	for _, l := range listed {
		pod, ok := ticdcapi.CapturePod(l.Address, tc.Namespace, tc.Name)
		if _, exists := captures[pod]; !ok || !exists {
			continue // another cluster's capture, or a pod being deleted
		}
		cp := v1alpha1.TiCDCCapture{PodName: pod, ID: l.ID, IsOwner: l.IsOwner, Ready: true}
		if prev, ok := old[pod]; ok && prev.ID == l.ID && prev.Version != "" {
			cp.Version = prev.Version
		} else if status, err := c.cdc.GetStatus(ctx, tc.Namespace, tc.Name, pod, ClientOptions(tc)); err == nil {
			cp.Version = status.Version
		} else {
			klog.FromContext(ctx).V(2).Info("could not read the TiCDC capture's version", "pod", klog.KRef(tc.Namespace, pod), "err", err)
		}
		captures[pod] = cp
	}
}

// observeEach asks every pod's /status, for a TiCDC without the captures API: a capture that answers
// is ready. It returns an error when a pod did not answer.
func (c *Component) observeEach(ctx context.Context, tc *v1alpha1.TidbCluster, captures map[string]v1alpha1.TiCDCCapture) error {
	var errs []error
	for pod := range captures {
		status, err := c.cdc.GetStatus(ctx, tc.Namespace, tc.Name, pod, ClientOptions(tc))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		captures[pod] = v1alpha1.TiCDCCapture{PodName: pod, ID: status.ID, Version: status.Version, IsOwner: status.IsOwner, Ready: true}
	}
	return errors.Join(errs...)
}

// ReadyCaptures counts the ready captures in status.
func ReadyCaptures(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, cp := range tc.Status.TiCDC.Captures {
		if cp.Ready {
			n++
		}
	}
	return n
}

// NotReady reports TiCDCCaptureNotReady while fewer captures are ready than spec.ticdc.replicas.
func (c *Component) NotReady(tc *v1alpha1.TidbCluster) (reason, message string) {
	if ready := ReadyCaptures(tc); ready < int(tc.Spec.TiCDC.Replicas) {
		return "TiCDCCaptureNotReady", fmt.Sprintf("TiCDC capture(s) are not ready: %d of %d", ready, tc.Spec.TiCDC.Replicas)
	}
	return "", ""
}
