package v1alpha1

import (
	"slices"
	"strconv"
	"strings"

	kjson "sigs.k8s.io/json"
)

// The CRD schemas leave the Kubernetes types they embed (affinity,
// additionalContainers, podSecurityContext …) open with
// x-kubernetes-preserve-unknown-fields: their full schemas would make the
// TidbCluster CRD 2.4 MB, over etcd's request limit (docs/compatibility.md).
// The API server therefore stores a misspelt field inside them, and these Go
// types drop it when the object is read. The decoder reads the spec strictly
// as well and lists such fields by their JSON path in the kind's
// UnknownFields, so the controllers can name them; reading never fails
// because of them.

// maxUnknownFields bounds how many unknown fields one object records; the
// rest are counted in a last entry ("… and 12 more").
const maxUnknownFields = 20

// unmarshalNoting reads data into v as utiljson.Unmarshal does
// (case-sensitive keys, exact integers) and returns, sorted, the JSON paths
// of the fields data has and v's types do not, those under prefix (a key
// followed by a dot, or "" for all), each prefixed with under. The value is
// read in full even when there are such fields.
func unmarshalNoting(data []byte, v any, prefix, under string) ([]string, error) {
	strictErrs, err := kjson.UnmarshalStrict(data, v, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range strictErrs {
		fp, ok := e.(interface{ FieldPath() string })
		if !ok || !strings.HasPrefix(fp.FieldPath(), prefix) {
			continue
		}
		paths = append(paths, under+fp.FieldPath())
	}
	return boundUnknown(paths), nil
}

// boundUnknown sorts paths and keeps at most maxUnknownFields of them.
func boundUnknown(paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	slices.Sort(paths)
	if len(paths) > maxUnknownFields {
		more := len(paths) - maxUnknownFields + 1
		paths = append(paths[:maxUnknownFields-1], "… and "+strconv.Itoa(more)+" more")
	}
	return paths
}

// GetUnknownFields returns tc.UnknownFields: the spec's fields, by JSON
// path, that pass-through Kubernetes types do not know and reading dropped.
func (tc *TidbCluster) GetUnknownFields() []string { return tc.UnknownFields }

// GetUnknownFields returns b.UnknownFields (see TidbCluster.GetUnknownFields).
func (b *Backup) GetUnknownFields() []string { return b.UnknownFields }

// GetUnknownFields returns r.UnknownFields (see TidbCluster.GetUnknownFields).
func (r *Restore) GetUnknownFields() []string { return r.UnknownFields }

// GetUnknownFields returns bs.UnknownFields (see TidbCluster.GetUnknownFields).
func (bs *BackupSchedule) GetUnknownFields() []string { return bs.UnknownFields }

// GetUnknownFields returns ti.UnknownFields (see TidbCluster.GetUnknownFields).
func (ti *TidbInitializer) GetUnknownFields() []string { return ti.UnknownFields }

// GetUnknownFields returns tm.UnknownFields (see TidbCluster.GetUnknownFields).
func (tm *TidbMonitor) GetUnknownFields() []string { return tm.UnknownFields }

// GetUnknownFields returns td.UnknownFields (see TidbCluster.GetUnknownFields).
func (td *TidbDashboard) GetUnknownFields() []string { return td.UnknownFields }

// GetUnknownFields returns tngm.UnknownFields (see TidbCluster.GetUnknownFields).
func (tngm *TidbNGMonitoring) GetUnknownFields() []string { return tngm.UnknownFields }

// GetUnknownFields returns dc.UnknownFields (see TidbCluster.GetUnknownFields).
func (dc *DMCluster) GetUnknownFields() []string { return dc.UnknownFields }
