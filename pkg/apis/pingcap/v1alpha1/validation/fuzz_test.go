package validation

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
)

// FuzzValidate decodes mutated example and corpus objects as each kind and
// validates them as read and after defaulting. It asserts that validation
// never panics, never changes its argument, returns the same errors when
// run twice, and gives every error a field path under metadata or spec.
func FuzzValidate(f *testing.F) {
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
		checkValidate(t, data, &v1alpha1.TidbCluster{}, defaulting.SetTidbClusterDefaults, ValidateTidbCluster, (*v1alpha1.TidbCluster).DeepCopy)
		checkValidate(t, data, &v1alpha1.Backup{}, defaulting.SetBackupDefaults, ValidateBackup, (*v1alpha1.Backup).DeepCopy)
		checkValidate(t, data, &v1alpha1.Restore{}, defaulting.SetRestoreDefaults, ValidateRestore, (*v1alpha1.Restore).DeepCopy)
		checkValidate(t, data, &v1alpha1.BackupSchedule{}, defaulting.SetBackupScheduleDefaults, ValidateBackupSchedule, (*v1alpha1.BackupSchedule).DeepCopy)
	})
}

func checkValidate[T any](t *testing.T, data []byte, obj *T, setDefaults func(*T), validate func(*T) field.ErrorList, deepCopy func(*T) *T) {
	t.Helper()
	if json.Unmarshal(data, obj) != nil || !reflect.DeepEqual(obj, obj) {
		return // unreadable metadata, or a NaN that no comparison finds equal to itself
	}
	defaulted := deepCopy(obj)
	setDefaults(defaulted)
	for _, in := range []*T{obj, defaulted} {
		before := deepCopy(in)
		first := validate(in)
		if !equality.Semantic.DeepEqual(before, in) {
			t.Fatalf("%T: validation changed its argument:\n%s", in, cmp.Diff(before, in))
		}
		if second := validate(in); !reflect.DeepEqual(errStrings(first), errStrings(second)) {
			t.Fatalf("%T: validation is not deterministic:\n%s", in, cmp.Diff(errStrings(first), errStrings(second)))
		}
		for _, e := range first {
			if root := rootOf(e.Field); root != "spec" && root != "metadata" {
				t.Fatalf("%T: error %q has no field path under metadata or spec", in, e.Error())
			}
		}
	}
}

func errStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// rootOf returns the first segment of a field path such as spec.pd.config.
func rootOf(path string) string {
	for i, r := range path {
		if r == '.' || r == '[' {
			return path[:i]
		}
	}
	return path
}
