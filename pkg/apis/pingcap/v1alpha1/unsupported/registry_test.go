package unsupported

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// checkRegistry proves each entry of reg: an empty object sets none, and
// the entry's Example makes Fields name the entry (and only it).
func checkRegistry[T any](t *testing.T, kind string, reg []Field[T]) {
	t.Helper()
	if got := Fields(reg, new(T)); len(got) != 0 {
		t.Errorf("%s: an empty object names %v", kind, got)
	}
	seen := map[string]bool{}
	for _, f := range reg {
		if seen[f.Path] || !strings.HasPrefix(f.Path, "spec.") || f.Set == nil || f.Example == nil {
			t.Errorf("%s: entry %q is listed twice, outside spec, or lacks Set or Example", kind, f.Path)
			continue
		}
		seen[f.Path] = true
		obj := new(T)
		f.Example(obj)
		if got := Fields(reg, obj); !slices.Equal(got, []string{f.Name()}) {
			t.Errorf("%s: setting %s names %v, want [%s]", kind, f.Path, got, f.Name())
		}
	}
}

func TestEveryEntryIsNamedOnceSet(t *testing.T) {
	t.Parallel()
	checkRegistry(t, "TidbCluster", TidbCluster)
	checkRegistry(t, "TidbMonitor", TidbMonitor)
	checkRegistry(t, "TidbInitializer", TidbInitializer)
	checkRegistry(t, "TidbDashboard", TidbDashboard)
	checkRegistry(t, "TidbNGMonitoring", TidbNGMonitoring)
	checkRegistry(t, "Backup", Backup)
	checkRegistry(t, "Restore", Restore)
	checkRegistry(t, "BackupSchedule", BackupSchedule)
	checkRegistry(t, "CompactBackup", CompactBackup)
	checkRegistry(t, "DMCluster", DMCluster)
	if len(ByKind()) != 10 {
		t.Errorf("ByKind has %d kinds, want the 10 served", len(ByKind()))
	}
}

func TestCovers(t *testing.T) {
	t.Parallel()
	paths := []string{"spec.pdms", "spec.pd.mode"}
	for path, want := range map[string]bool{"spec.pdms": true, "spec.pdms.replicas": true, "spec.pdmsx": false,
		"spec.pd": false, "spec.pd.mode": true} {
		if got := Covers(paths, path); got != want {
			t.Errorf("Covers(%s) = %v, want %v", path, got, want)
		}
	}
}

// TestSetNeverChangesTheObject: a Set whose getter creates a missing parent
// (a log backup template) works on a copy.
func TestSetNeverChangesTheObject(t *testing.T) {
	t.Parallel()
	bs := &v1alpha1.BackupSchedule{}
	Fields(BackupSchedule, bs)
	if bs.Spec.LogBackupTemplate != nil {
		t.Error("Fields created the log backup template")
	}
}
