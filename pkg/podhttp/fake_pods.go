package podhttp

import (
	"slices"
	"sync"
)

// Call is one recorded call of a per-pod fake client (tikvapi's and tiflashapi's FakeClient).
type Call struct {
	Namespace, TCName, PodName string
	Options                    Options
}

// FakePods is the state of a per-pod fake client: a value of type V per pod (Default until set), an
// error injected per pod, and every call, of type C, in the order made. Pods are keyed by namespace and
// name. The zero value is ready to use. Safe for concurrent use.
type FakePods[V, C any] struct {
	// Default is the value of a pod nothing was set for. Set it before first use.
	Default V

	mu     sync.Mutex
	values map[string]V
	errs   map[string]error
	calls  []C
}

func podKey(namespace, podName string) string { return namespace + "/" + podName }

// Set sets the value of a pod.
func (f *FakePods[V, C]) Set(namespace, podName string, value V) {
	f.Update(namespace, podName, func(v *V) { *v = value })
}

// Update sets the value of a pod to what update makes of its current one (Default when none was set).
// update runs under the lock and must not call f.
func (f *FakePods[V, C]) Update(namespace, podName string, update func(*V)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.values == nil {
		f.values = map[string]V{}
	}
	key := podKey(namespace, podName)
	value, ok := f.values[key]
	if !ok {
		value = f.Default
	}
	update(&value)
	f.values[key] = value
}

// SetError makes every call for a pod fail with err (after being recorded); nil clears it.
func (f *FakePods[V, C]) SetError(namespace, podName string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.errs, podKey(namespace, podName))
		return
	}
	if f.errs == nil {
		f.errs = map[string]error{}
	}
	f.errs[podKey(namespace, podName)] = err
}

// Calls returns the recorded calls, oldest first.
func (f *FakePods[V, C]) Calls() []C {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Record records call, made for pod namespace/podName, and returns the pod's value, or the zero V and
// the pod's injected error.
func (f *FakePods[V, C]) Record(call C, namespace, podName string) (V, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	if err := f.errs[podKey(namespace, podName)]; err != nil {
		var zero V
		return zero, err
	}
	if value, ok := f.values[podKey(namespace, podName)]; ok {
		return value, nil
	}
	return f.Default, nil
}
