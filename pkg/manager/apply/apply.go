// Package apply creates or updates the objects a TidbCluster (or another
// pingcap.com Owner: a TidbMonitor, a TidbDashboard, …) owns without
// churn: each desired object carries a hash of exactly the fields the
// operator sets (AnnAppliedHash); an object whose recorded hash matches the
// desired one is not written, so a converged cluster's sync makes no API
// write. Updates copy only owned fields onto the live object, keeping
// foreign labels and annotations, Service ClusterIPs and NodePorts, and never
// sending immutable fields. Every write records a Successful<Verb> or
// Failed<Verb> event on the owner; successes are batched per
// component sync when the context carries an EventBatch.
package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// AnnAppliedHash records the hash of the fields the operator last applied.
const AnnAppliedHash = "tidb.kubetidb.io/applied-hash"

// object is what apply works on.
type object interface {
	metav1.Object
	runtime.Object
}

// ops are the per-kind parts of applying.
type ops[T object] struct {
	kind string
	// get reads the live object from a cache; NotFound when absent.
	get func(namespace, name string) (T, error)
	// fetch reads the live object from the API, for an object the cache
	// does not hold although it exists (see apply).
	fetch func(ctx context.Context, namespace, name string) (T, error)
	// create and update write through the API.
	create func(ctx context.Context, obj T) (T, error)
	update func(ctx context.Context, obj T) (T, error)
	// owned returns the fields the operator sets on desired, for hashing.
	owned func(desired T) any
	// merge copies the owned fields of desired onto live (a copy) and returns it.
	merge func(live, desired T) T
	// drifted reports live values that differ from desired although the hash
	// matches (fields others may change, such as replicas); may be nil.
	drifted func(live, desired T) bool
	// adopt, for kinds with a pod template, marks desired when the write
	// keeps live's template (adoptTemplate); merge then leaves it; may be nil.
	// whole reads live from the API (the caches strip pod templates).
	adopt func(live, desired T, whole func() (T, error)) error
	// metaOnly says the caches hold an object of this kind that the
	// operator applied (it carries AnnAppliedHash) without its spec
	// (StripApplied): an update reads live whole from the API first.
	metaOnly bool
}

// Hash returns the hex sha256 of v's JSON (as json.Marshal writes it),
// shortened to 16 characters. The JSON is streamed into the hash through
// a json.Encoder, whose buffers are pooled: a sync hashes every object it
// applies, and the encoding would otherwise be allocated anew each time.
func Hash(v any) (string, error) {
	h := &jsonHasher{h: sha256.New()}
	if err := json.NewEncoder(h).Encode(v); err != nil {
		return "", fmt.Errorf("hash: %w", err)
	}
	return hex.EncodeToString(h.h.Sum(nil))[:16], nil
}

// jsonHasher hashes what a json.Encoder writes but the newline it ends
// each value with, so that the sum is that of json.Marshal's output.
type jsonHasher struct{ h hash.Hash }

func (w *jsonHasher) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	w.h.Write(p)
	return n, nil
}

// ownedMeta is the metadata the operator sets on every object.
type ownedMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func metaOf(o metav1.Object) ownedMeta {
	return ownedMeta{Labels: o.GetLabels(), Annotations: o.GetAnnotations()}
}

// apply creates desired when it is missing, updates the live object when the
// recorded hash differs (or values drifted), and otherwise writes nothing.
// It returns the live (or written) object. It refuses to take over an object
// controlled by something other than owner.
//
// An object it created that the cache does not show yet is not created again
// for cacheLagLimit: apply returns a flow.RequeueError instead, and the
// cache's add event brings the next sync.
func apply[T object](ctx context.Context, a *Applier, owner Owner, desired T, o ops[T]) (T, error) {
	var zero T
	rec := a.recorder
	key := func() string { return writeKey(o.kind, desired.GetNamespace(), desired.GetName()) }
	live, err := o.get(desired.GetNamespace(), desired.GetName())
	switch {
	case err == nil && !a.recent.empty(): // a converged sync builds no key
		a.recent.seen(key())
	case apierrors.IsNotFound(err):
		if ago, ok := a.recent.pending(key()); ok {
			return zero, flow.Requeue("created %s %s %v ago; waiting for the cache to show it", o.kind, desired.GetName(), ago.Round(time.Millisecond))
		}
	}
	fetched := false // live was read from the API, whole
	if err == nil && o.adopt != nil {
		whole := func() (T, error) { return o.fetch(ctx, desired.GetNamespace(), desired.GetName()) }
		if err = o.adopt(live, desired, whole); err != nil { // marks desired: keep live's pod template
			return zero, fmt.Errorf("read %s %s/%s: %w", o.kind, desired.GetNamespace(), desired.GetName(), err)
		}
	}
	hash, hashErr := Hash(o.owned(desired))
	if hashErr != nil {
		return zero, hashErr
	}
	setOwner(desired, owner)
	annotate(desired, AnnAppliedHash, hash)
	if apierrors.IsNotFound(err) {
		created, createErr := o.create(ctx, desired)
		if !apierrors.IsAlreadyExists(createErr) || o.fetch == nil {
			recordEvent(ctx, rec, owner, "Create", o.kind, desired.GetName(), createErr)
			if createErr != nil {
				return zero, fmt.Errorf("create %s %s/%s: %w", o.kind, desired.GetNamespace(), desired.GetName(), createErr)
			}
			a.recent.wrote(key())
			return created, nil
		}
		// It exists, but the cache, which holds only objects labelled
		// managed-by=tidb-operator, does not: someone changed that label.
		// Read it from the API and put the labels back (below).
		live, err = o.fetch(ctx, desired.GetNamespace(), desired.GetName())
		fetched = true
	}
	if err != nil {
		return zero, fmt.Errorf("get %s %s/%s: %w", o.kind, desired.GetNamespace(), desired.GetName(), err)
	}
	if ref := metav1.GetControllerOf(live); ref != nil && ref.UID != owner.GetUID() {
		return zero, fmt.Errorf("%s %s/%s is controlled by %s %s, not by %s %s",
			o.kind, live.GetNamespace(), live.GetName(), ref.Kind, ref.Name, ownerKind(owner).Kind, owner.GetName())
	}
	adopted := metav1.GetControllerOf(live) != nil
	if adopted && live.GetAnnotations()[AnnAppliedHash] == hash && !labelsDrifted(live, desired) &&
		!hasStaleAnnotations(live, desired) && (o.drifted == nil || !o.drifted(live, desired)) {
		return live, nil
	}
	if !fetched && (keepsLiveTemplate(desired) || o.metaOnly && live.GetAnnotations()[AnnAppliedHash] != "") {
		// merge keeps live's pod template, or the fields of live's spec the
		// API server set, which the cache holds stripped (StripTemplate,
		// StripApplied): write them back as the API has them.
		if live, err = o.fetch(ctx, desired.GetNamespace(), desired.GetName()); err != nil {
			return zero, fmt.Errorf("get %s %s/%s: %w", o.kind, desired.GetNamespace(), desired.GetName(), err)
		}
	}
	merged := o.merge(live.DeepCopyObject().(T), desired)
	mergeMeta(merged, desired)
	dropStaleAnnotations(merged, desired)
	setOwner(merged, owner)
	updated, err := o.update(ctx, merged)
	recordEvent(ctx, rec, owner, "Update", o.kind, desired.GetName(), err)
	if err != nil {
		return zero, fmt.Errorf("update %s %s/%s: %w", o.kind, desired.GetNamespace(), desired.GetName(), err)
	}
	klog.FromContext(ctx).V(2).Info("updated", "kind", o.kind, "name", desired.GetName(), "hash", hash)
	return updated, nil
}

// labelsDrifted reports an owned label (one desired sets) that someone
// removed or changed on live: selectors and dashboards rely on them, and
// the recorded hash cannot see a change made after it was written. Labels
// only others set are theirs and stay.
func labelsDrifted(live, desired metav1.Object) bool {
	have := live.GetLabels()
	for k, v := range desired.GetLabels() {
		if got, ok := have[k]; !ok || got != v {
			return true
		}
	}
	return false
}

// setOwner makes owner the controller of obj, replacing no other controller.
func setOwner(obj metav1.Object, owner Owner) {
	if ref := metav1.GetControllerOf(obj); ref != nil && ref.UID == owner.GetUID() {
		return
	}
	refs := obj.GetOwnerReferences()
	refs = append(refs, *metav1.NewControllerRef(owner, ownerKind(owner)))
	obj.SetOwnerReferences(refs)
}

func annotate(obj metav1.Object, key, value string) {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[key] = value
	obj.SetAnnotations(ann)
}

// mergeMeta puts desired's labels and annotations over live's, keeping
// labels and annotations others set.
func mergeMeta(live, desired metav1.Object) {
	live.SetLabels(mergeMaps(live.GetLabels(), desired.GetLabels()))
	live.SetAnnotations(mergeMaps(live.GetAnnotations(), desired.GetAnnotations()))
}

func mergeMaps(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return base
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
