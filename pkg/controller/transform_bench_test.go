package controller

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	pingcapscheme "github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/scheme"
)

// BenchmarkCachedBytes decodes each object of testdata/cached (one of
// each kind a bench cluster's informers hold, as read from a real API
// server with KWOK's pods) as a watch delivers it — protobuf for the
// built-in kinds, JSON for TidbClusters — and keeps 10 000 copies with and
// without the informer's transform. It reports the heap each kept object
// holds (retained-B/object): the figures of docs/performance.md's memory
// section.
func BenchmarkCachedBytes(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("testdata", "cached", "*.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixtures in testdata/cached: %v", err)
	}
	for _, f := range files {
		kind := strings.TrimSuffix(filepath.Base(f), ".json")
		wire, decode := wireOf(b, f)
		for _, c := range []struct {
			name      string
			transform func(any) (any, error)
		}{{"raw", func(o any) (any, error) { return o, nil }}, {"cached", transformOf(kind)}} {
			b.Run(kind+"/"+c.name, func(b *testing.B) {
				const n = 10000
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				kept := make([]any, 0, n)
				for range n {
					o, err := decode(wire)
					if err != nil {
						b.Fatal(err)
					}
					x, err := c.transform(o)
					if err != nil {
						b.Fatal(err)
					}
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
}

// transformOf is the transform the informer of kind runs.
func transformOf(kind string) func(any) (any, error) {
	switch kind {
	case "tidbcluster":
		return DropManagedFields
	case "job":
		return StripJob
	}
	return StripCached
}

// wireOf reads a JSON fixture and returns the bytes a watch would carry
// for it and their decoder.
func wireOf(b *testing.B, file string) ([]byte, func([]byte) (any, error)) {
	b.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		b.Fatal(err)
	}
	if strings.HasPrefix(tm.APIVersion, "pingcap.com/") {
		codecs := serializer.NewCodecFactory(pingcapscheme.Scheme)
		d := codecs.UniversalDeserializer()
		return raw, func(w []byte) (any, error) { o, _, err := d.Decode(w, nil, nil); return o, err }
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var buf bytes.Buffer
	if err := s.Encode(obj, &buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes(), func(w []byte) (any, error) { o, _, err := s.Decode(w, nil, nil); return o, err }
}
