package controller

import (
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// internLimit bounds the strings an interner holds: past it the table
// starts again (strings handed out stay valid; only sharing is lost until
// the table refills), so names of long-deleted objects are not kept.
const internLimit = 1 << 16

// interner hands out one shared copy of each string it is given, so that
// the thousands of cached objects of the same kinds share their label
// keys and values, namespaces and owners instead of each holding its own
// decoded copy. Safe for concurrent use (every informer transforms on its
// own goroutine).
type interner struct {
	mu      sync.Mutex
	strings map[string]string
}

func (in *interner) intern(s string) string {
	if s == "" {
		return s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.strings[s]; ok {
		return v
	}
	if in.strings == nil || len(in.strings) >= internLimit {
		in.strings = make(map[string]string)
	}
	in.strings[s] = s
	return s
}

// cacheStrings is the interner of the informer transforms.
var cacheStrings = &interner{}

// internMeta makes m share its namespace, label keys and values,
// annotation keys and owner references with the other cached objects.
// Annotation values are left: they are mostly per object (hashes, JSON).
func internMeta(m metav1.Object) {
	in := cacheStrings
	m.SetNamespace(in.intern(m.GetNamespace()))
	if l := m.GetLabels(); len(l) > 0 {
		shared := make(map[string]string, len(l))
		for k, v := range l {
			shared[in.intern(k)] = in.intern(v)
		}
		m.SetLabels(shared)
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		shared := make(map[string]string, len(a))
		for k, v := range a {
			shared[in.intern(k)] = v
		}
		m.SetAnnotations(shared)
	}
	refs := m.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name = in.intern(r.APIVersion), in.intern(r.Kind), in.intern(r.Name)
		r.UID = types.UID(in.intern(string(r.UID)))
	}
}

// mapLimit bounds the maps a mapInterner holds (see internLimit).
const mapLimit = 1 << 13

// mapInterner hands out one shared copy of each map it is given: a
// StatefulSet's own labels, its selector, its pod template's and its claim
// templates' labels are one map, and so are the labels of a component's
// Services and ConfigMap, the annotations of its pods, and the storage
// requests of its claims. Shared maps are read-only, like every cached
// object. text renders a value for the map's key (equal texts: equal
// values); share returns the value the shared map holds. Safe for
// concurrent use.
type mapInterner[K ~string, V any] struct {
	text  func(V) string
	share func(V) V

	mu   sync.Mutex
	maps map[string]map[K]V
}

func (in *mapInterner[K, V]) intern(m map[K]V) map[K]V {
	if len(m) == 0 {
		return m
	}
	type entry struct{ key, text string }
	entries := make([]entry, 0, len(m))
	size := 0
	for k, v := range m {
		e := entry{string(k), in.text(v)}
		entries = append(entries, e)
		size += len(e.key) + len(e.text) + 2
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	var b strings.Builder
	b.Grow(size)
	for _, e := range entries {
		b.WriteString(e.key)
		b.WriteByte(0)
		b.WriteString(e.text)
		b.WriteByte(0)
	}
	key := b.String()
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := in.maps[key]; ok {
		return shared
	}
	if in.maps == nil || len(in.maps) >= mapLimit {
		in.maps = make(map[string]map[K]V)
	}
	shared := make(map[K]V, len(m))
	for k, v := range m {
		shared[K(cacheStrings.intern(string(k)))] = in.share(v)
	}
	in.maps[key] = shared
	return shared
}

// cacheLabels is the label- and annotation-map interner of the informer
// transforms.
var cacheLabels = &mapInterner[string, string]{
	text:  func(v string) string { return v },
	share: cacheStrings.intern,
}

// cacheResources is the interner of the storage requests and capacities of
// cached claims and claim templates: a few sizes repeated by every volume.
// A quantity's text is its canonical form (which the decoder keeps as
// given only when the input was canonical), so equal texts are equal
// quantities that encode alike, and a shared map encodes as each object's
// own did.
var cacheResources = &mapInterner[corev1.ResourceName, resource.Quantity]{
	text:  func(q resource.Quantity) string { return q.String() },
	share: func(q resource.Quantity) resource.Quantity { return q },
}

// shareLabelMaps makes the label maps of a workload, Service, ConfigMap or
// RBAC object, which repeat a component's labels, shared copies, and so
// are the annotations of pods and pod templates (the same few per
// component) and the storage requests of claim templates. Pods, PVCs and
// PVs carry labels of their own member and keep their own label maps.
func shareLabelMaps(obj any) {
	in := cacheLabels
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		o.Labels, o.Spec.Template.Labels = in.intern(o.Labels), in.intern(o.Spec.Template.Labels)
		o.Spec.Template.Annotations = in.intern(o.Spec.Template.Annotations)
		if s := o.Spec.Selector; s != nil {
			s.MatchLabels = in.intern(s.MatchLabels)
		}
		for i := range o.Spec.VolumeClaimTemplates {
			t := &o.Spec.VolumeClaimTemplates[i]
			t.Labels = in.intern(t.Labels)
			shareResources(&t.Spec.Resources)
		}
	case *appsv1.Deployment:
		o.Labels, o.Spec.Template.Labels = in.intern(o.Labels), in.intern(o.Spec.Template.Labels)
		o.Spec.Template.Annotations = in.intern(o.Spec.Template.Annotations)
		if s := o.Spec.Selector; s != nil {
			s.MatchLabels = in.intern(s.MatchLabels)
		}
	case *corev1.Pod:
		o.Annotations = in.intern(o.Annotations)
	case *corev1.Service:
		o.Labels, o.Spec.Selector = in.intern(o.Labels), in.intern(o.Spec.Selector)
	case *corev1.ConfigMap:
		o.Labels = in.intern(o.Labels)
	case *corev1.ServiceAccount:
		o.Labels = in.intern(o.Labels)
	case *rbacv1.Role:
		o.Labels = in.intern(o.Labels)
	case *rbacv1.RoleBinding:
		o.Labels = in.intern(o.Labels)
	}
}

// shareResources makes a claim's requests and limits shared copies.
func shareResources(r *corev1.VolumeResourceRequirements) {
	r.Requests, r.Limits = cacheResources.intern(r.Requests), cacheResources.intern(r.Limits)
}
