package controller

import (
	"bytes"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// BenchmarkCachedServiceBytes decodes Services from protobuf, as a watch
// does, and keeps them with and without the informers' transform; it
// reports the heap each kept object holds (retained-B/object), the figure
// docs/performance.md quotes for the shared strings.
func BenchmarkCachedServiceBytes(b *testing.B) {
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "db-pd", Namespace: "bench0001",
			Labels: map[string]string{"app.kubernetes.io/component": "pd", "app.kubernetes.io/instance": "db",
				"app.kubernetes.io/managed-by": "tidb-operator", "app.kubernetes.io/name": "tidb-cluster", "app.kubernetes.io/used-by": "end-user"},
			Annotations: map[string]string{"tidb.kubetidb.io/applied-hash": "0123456789abcdef"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "pingcap.com/v1alpha1", Kind: "TidbCluster", Name: "db",
				UID: "8c4b1e0a-1111-2222-3333-444455556666"}}}}
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var buf bytes.Buffer
	if err := s.Encode(svc, &buf); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		transform func(any) (any, error)
	}{{"raw", func(o any) (any, error) { return o, nil }}, {"StripCached", StripCached}} {
		b.Run(c.name, func(b *testing.B) {
			const n = 10000
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			kept := make([]any, 0, n)
			for range n {
				o, _, err := s.Decode(buf.Bytes(), nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				x, _ := c.transform(o)
				kept = append(kept, x)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(kept)
			for b.Loop() { // the figure is the retained heap, not time
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "retained-B/object")
		})
	}
}
