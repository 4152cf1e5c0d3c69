//go:build integration

package badinput

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// updatePending reports whether r is an update case whose update has not
// been applied yet (its outcome is not observed until then).
func (r *result) updatePending() bool {
	return r.c.Update != nil && !r.updated && !r.done
}

// updateRunning applies the update of every update case whose object the
// operator has finished building (see built), after recording the
// versions of the objects written for it; a refused update resolves the
// case as rejected. It runs on the goroutine of watchOutcomes, once per
// round, with that round's snapshot.
func updateRunning(env *framework.Env, results []*result, snap *snapshot) {
	pending := false
	for _, r := range results {
		pending = pending || (r.updatePending() && r.uid != "")
	}
	if !pending {
		return
	}
	all, err := written(env.Ctx, env)
	if err != nil {
		return
	}
	for _, r := range results {
		if !r.updatePending() || r.uid == "" {
			continue
		}
		versions := ownedVersions(all, r.uid)
		if !built(snap.objects[key(corpus.KindOf(r.c), r.name)], versions) {
			continue
		}
		r.before = versions
		patch, err := json.Marshal(r.c.Update)
		if err != nil {
			r.done, r.problem = true, err.Error()
			continue
		}
		r.updated = true
		_, err = env.Dynamic.Resource(resources[corpus.KindOf(r.c)]).Namespace(env.Namespace).
			Patch(env.Ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			r.rejected = err.Error()
			r.resolveRejected()
		}
	}
}

// built reports whether the first sync of obj is over: its StatefulSet
// (the last object a sync writes) is among versions and its status was
// written for its generation (the status is written once, at the end).
func built(obj *unstructured.Unstructured, versions map[string]string) bool {
	if obj == nil {
		return false
	}
	gen, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if gen != obj.GetGeneration() {
		return false
	}
	for k := range versions {
		if strings.HasPrefix(k, "StatefulSet ") {
			return true
		}
	}
	return false
}

// ownedVersions maps "<kind> <name>" of every object owned by uid to what
// changes when the operator writes it: the generation of a StatefulSet or
// Job (their status is written by other controllers), the
// resourceVersion of anything else.
func ownedVersions(all map[string][]metav1.Object, uid types.UID) map[string]string {
	out := map[string]string{}
	for kind, objs := range all {
		if kind == "PersistentVolumeClaim" {
			continue // bound by the PV controller, never rewritten by the operator
		}
		for _, o := range objs {
			if !ownsOne([]metav1.Object{o}, uid) {
				continue
			}
			v := o.GetResourceVersion()
			switch o.(type) {
			case *appsv1.StatefulSet, *batchv1.Job:
				v = fmt.Sprintf("generation %d", o.GetGeneration())
			}
			out[kind+" "+o.GetName()] = v
		}
	}
	return out
}

// checkUnchanged fails an update case when an object written for it
// before the update was changed, deleted or joined by another afterwards:
// a rejected or invalid update must write nothing.
func checkUnchanged(r *result, all map[string][]metav1.Object) {
	if r.uid == "" || !r.updated {
		return
	}
	after := ownedVersions(all, r.uid)
	var changed []string
	for k, v := range after {
		if was, ok := r.before[k]; !ok {
			changed = append(changed, k+" written")
		} else if was != v {
			changed = append(changed, fmt.Sprintf("%s changed (%s → %s)", k, was, v))
		}
	}
	for k := range r.before {
		if _, ok := after[k]; !ok {
			changed = append(changed, k+" deleted")
		}
	}
	if len(changed) == 0 {
		return
	}
	sort.Strings(changed)
	msg := "written for it after the update (half-applied): " + strings.Join(changed, ", ")
	if r.problem != "" {
		msg = r.problem + "; " + msg
	}
	r.problem = msg
}
