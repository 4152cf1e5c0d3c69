package defaulting

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
)

// FuzzDefaulting decodes mutated example and corpus objects as each kind
// and asserts that defaulting never panics and is idempotent:
// default(default(x)) == default(x), for TidbClusters (also through the
// ComponentAccessor of every component) and for Backups, Restores and
// BackupSchedules.
func FuzzDefaulting(f *testing.F) {
	seeds, err := corpus.Seeds("")
	if err != nil {
		f.Fatal(err)
	}
	for i, doc := range seeds {
		f.Add(doc, uint16(0), "", int64(0))
		for p := uint16(1); p <= 4; p++ {
			f.Add(doc, uint16(i)*31+p*97, "x y", int64(1)<<40+int64(p))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, sel uint16, s string, n int64) {
		data := corpus.Poke(doc, sel, s, n)
		checkIdempotent(t, data, &v1alpha1.TidbCluster{}, func(tc *v1alpha1.TidbCluster) *v1alpha1.TidbCluster {
			SetTidbClusterDefaults(tc)
			for _, c := range accessorComponents {
				a := NewComponentAccessor(tc, c)
				_, _, _ = a.Image(), a.Version(), a.ConfigUpdateStrategy()
			}
			return tc
		}, (*v1alpha1.TidbCluster).DeepCopy)
		checkIdempotent(t, data, &v1alpha1.Backup{}, func(b *v1alpha1.Backup) *v1alpha1.Backup {
			SetBackupDefaults(b)
			return b
		}, (*v1alpha1.Backup).DeepCopy)
		checkIdempotent(t, data, &v1alpha1.Restore{}, func(r *v1alpha1.Restore) *v1alpha1.Restore {
			SetRestoreDefaults(r)
			return r
		}, (*v1alpha1.Restore).DeepCopy)
		checkIdempotent(t, data, &v1alpha1.BackupSchedule{}, func(bs *v1alpha1.BackupSchedule) *v1alpha1.BackupSchedule {
			SetBackupScheduleDefaults(bs)
			return bs
		}, (*v1alpha1.BackupSchedule).DeepCopy)
	})
}

// accessorComponents are the components whose accessor the target reads
// after defaulting (it must not panic on any defaulted spec).
var accessorComponents = []Component{ComponentPD, ComponentTiKV, ComponentTiDB, ComponentTiFlash, ComponentTiCDC, ComponentPump, ComponentTiProxy, ComponentDiscovery}

func checkIdempotent[T any](t *testing.T, data []byte, obj *T, setDefaults func(*T) *T, deepCopy func(*T) *T) {
	t.Helper()
	if json.Unmarshal(data, obj) != nil || !reflect.DeepEqual(obj, obj) {
		return // unreadable metadata, or a NaN that no comparison finds equal to itself
	}
	once := setDefaults(deepCopy(obj))
	twice := setDefaults(deepCopy(once))
	if !equality.Semantic.DeepEqual(once, twice) {
		t.Fatalf("%T: defaulting is not idempotent:\n%s\ninput: %s", obj, cmp.Diff(once, twice), data)
	}
}
