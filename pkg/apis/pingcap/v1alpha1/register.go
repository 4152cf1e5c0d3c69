package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every kind in this package.
const GroupName = "pingcap.com"

// SchemeGroupVersion is the group and version the kinds are registered under.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	// SchemeBuilder collects the functions that add this package's kinds to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds every kind of this package to a scheme; it fails only
	// when a kind is registered twice under different Go types.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind returns the group-qualified kind for an unqualified kind name.
func Kind(kind string) schema.GroupKind {
	return SchemeGroupVersion.WithKind(kind).GroupKind()
}

// Resource returns the group-qualified resource for an unqualified resource name.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&TidbCluster{}, &TidbClusterList{},
		&Backup{}, &BackupList{},
		&Restore{}, &RestoreList{},
		&BackupSchedule{}, &BackupScheduleList{},
		&CompactBackup{}, &CompactBackupList{},
		&TidbInitializer{}, &TidbInitializerList{},
		&TidbMonitor{}, &TidbMonitorList{},
		&TidbDashboard{}, &TidbDashboardList{},
		&TidbNGMonitoring{}, &TidbNGMonitoringList{},
		&DMCluster{}, &DMClusterList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
