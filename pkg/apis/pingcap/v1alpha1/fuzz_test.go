package v1alpha1

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
)

// addSeeds adds every example and corpus object of kind ("" for all), each
// as is and with a few structural pokes, so that a plain `go test` (which
// runs the seeds only) already feeds odd values to the target.
func addSeeds(f *testing.F, kind string) {
	f.Helper()
	seeds, err := corpus.Seeds(kind)
	if err != nil {
		f.Fatal(err)
	}
	for i, doc := range seeds {
		f.Add(doc, uint16(0), "", int64(0), i%2 == 0)
		for p := uint16(1); p <= 4; p++ {
			f.Add(doc, uint16(i)*31+p*97, "x y", int64(1)<<40+int64(p), p%2 == 0)
		}
	}
	f.Add([]byte(`{"metadata":{"name":"x"},"spec":{"pd":{"config":"a = nan\nb = inf"}}}`), uint16(0), "", int64(0), false)
	f.Add([]byte(`{"metadata":{"name":"x"},"spec":"nope","status":[]}`), uint16(0), "", int64(0), true)
	f.Add([]byte(`{"metadata":{"name":"x"},"spec":{"tikv":{"replicas":1e400}}}`), uint16(0), "", int64(0), false)
}

// object is any of the four kinds, decoded and encoded through their own
// tolerant JSON methods.
type object interface {
	*TidbCluster | *Backup | *Restore | *BackupSchedule
}

// FuzzDecode reads mutated example and corpus objects as each of the four
// kinds, from JSON and from YAML, and asserts: decoding never panics; it
// fails only for input that is not an object with readable metadata; a
// decoded object encodes, and what it encodes to is a fixed point (encode
// ∘ decode of it gives the same JSON and the same object again); DeepCopy
// equals the original.
func FuzzDecode(f *testing.F) {
	addSeeds(f, "")
	f.Fuzz(func(t *testing.T, doc []byte, sel uint16, s string, n int64, asYAML bool) {
		data := corpus.Poke(doc, sel, s, n)
		checkRoundTrip(t, data, asYAML, &TidbCluster{}, func() *TidbCluster { return &TidbCluster{} })
		checkRoundTrip(t, data, asYAML, &Backup{}, func() *Backup { return &Backup{} })
		checkRoundTrip(t, data, asYAML, &Restore{}, func() *Restore { return &Restore{} })
		checkRoundTrip(t, data, asYAML, &BackupSchedule{}, func() *BackupSchedule { return &BackupSchedule{} })
	})
}

func checkRoundTrip[T object](t *testing.T, data []byte, asYAML bool, first T, fresh func() T) {
	t.Helper()
	var err error
	if asYAML {
		err = yaml.Unmarshal(data, first)
	} else {
		err = utiljson.Unmarshal(data, first)
	}
	if err != nil {
		var parts objectParts
		if utiljson.Unmarshal(data, &parts) == nil {
			t.Fatalf("%T: decoding an object with readable metadata failed: %v\n%s", first, err, data)
		}
		return
	}
	b1, err := json.Marshal(first)
	if err != nil {
		t.Fatalf("%T: a decoded object does not encode: %v\ninput: %s", first, err, data)
	}
	second := fresh()
	if err := utiljson.Unmarshal(b1, second); err != nil {
		t.Fatalf("%T: its own encoding does not decode: %v\n%s", first, err, b1)
	}
	b2, err := json.Marshal(second)
	if err != nil {
		t.Fatalf("%T: re-encoding failed: %v", first, err)
	}
	if !sameJSON(b1, b2) {
		t.Fatalf("%T: encode∘decode is not a fixed point:\nfirst  %s\nsecond %s", first, b1, b2)
	}
	third := fresh()
	if err := utiljson.Unmarshal(b2, third); err != nil {
		t.Fatalf("%T: %v", first, err)
	}
	if !equality.Semantic.DeepEqual(second, third) && selfEqual(second) {
		t.Fatalf("%T: decoding the same JSON twice gave different objects: %s", first, cmp.Diff(second, third))
	}
	if copied := deepCopyOf(second); !equality.Semantic.DeepEqual(second, copied) && selfEqual(second) {
		t.Fatalf("%T: DeepCopy differs: %s", first, cmp.Diff(second, copied))
	}
}

func deepCopyOf[T object](o T) any {
	switch v := any(o).(type) {
	case *TidbCluster:
		return v.DeepCopy()
	case *Backup:
		return v.DeepCopy()
	case *Restore:
		return v.DeepCopy()
	case *BackupSchedule:
		return v.DeepCopy()
	}
	return nil
}

// selfEqual is false for values holding NaN (a TOML nan in a config), which
// no deep comparison finds equal to itself.
func selfEqual(v any) bool { return reflect.DeepEqual(v, v) }

func sameJSON(a, b []byte) bool {
	decode := func(data []byte) (any, error) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		return v, dec.Decode(&v)
	}
	va, errA := decode(a)
	vb, errB := decode(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}
