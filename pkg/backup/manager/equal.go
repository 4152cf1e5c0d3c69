package manager

import (
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// equalBackupStatus reports whether two Backup statuses are semantically equal.
func equalBackupStatus(a, b *v1alpha1.BackupStatus) bool { return equality.Semantic.DeepEqual(a, b) }

// equalRestoreStatus reports whether two Restore statuses are semantically equal.
func equalRestoreStatus(a, b *v1alpha1.RestoreStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}
