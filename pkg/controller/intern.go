package controller

import (
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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

// mapLimit bounds the label maps a mapInterner holds (see internLimit).
const mapLimit = 1 << 13

// mapInterner hands out one shared copy of each label map it is given:
// a StatefulSet's own labels, its selector, its pod template's and its
// claim templates' labels are one map, and so are the labels of a
// component's Services and ConfigMap. Shared maps are read-only, like
// every cached object. Safe for concurrent use.
type mapInterner struct {
	mu   sync.Mutex
	maps map[string]map[string]string
}

func (in *mapInterner) intern(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	size := 0
	for k, v := range m {
		keys = append(keys, k)
		size += len(k) + len(v) + 2
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(size)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	key := b.String()
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := in.maps[key]; ok {
		return shared
	}
	if in.maps == nil || len(in.maps) >= mapLimit {
		in.maps = make(map[string]map[string]string)
	}
	shared := make(map[string]string, len(m))
	for k, v := range m {
		shared[cacheStrings.intern(k)] = cacheStrings.intern(v)
	}
	in.maps[key] = shared
	return shared
}

// cacheLabels is the label-map interner of the informer transforms.
var cacheLabels = &mapInterner{}

// shareLabelMaps makes the label maps of a workload, Service, ConfigMap or
// RBAC object, which repeat a component's labels, shared copies. Pods,
// PVCs and PVs carry labels of their own member and are left alone.
func shareLabelMaps(obj any) {
	in := cacheLabels
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		o.Labels, o.Spec.Template.Labels = in.intern(o.Labels), in.intern(o.Spec.Template.Labels)
		if s := o.Spec.Selector; s != nil {
			s.MatchLabels = in.intern(s.MatchLabels)
		}
		for i := range o.Spec.VolumeClaimTemplates {
			t := &o.Spec.VolumeClaimTemplates[i]
			t.Labels = in.intern(t.Labels)
		}
	case *appsv1.Deployment:
		o.Labels, o.Spec.Template.Labels = in.intern(o.Labels), in.intern(o.Spec.Template.Labels)
		if s := o.Spec.Selector; s != nil {
			s.MatchLabels = in.intern(s.MatchLabels)
		}
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
