package component

// The Helm chart's values that grant a namespaced operator (clusterScoped:
// false) its cluster-wide permissions; the chart passes each on as a
// --cluster-permission-* flag. Messages about a missing permission name
// the value that grants it.
const (
	// NodePermission grants get on Nodes (--cluster-permission-node).
	NodePermission = "controllerManager.clusterPermissions.nodes"
	// PersistentVolumePermission grants list, watch and patch on
	// PersistentVolumes (--cluster-permission-pv).
	PersistentVolumePermission = "controllerManager.clusterPermissions.persistentvolumes"
	// StorageClassPermission grants get on StorageClasses (--cluster-permission-sc).
	StorageClassPermission = "controllerManager.clusterPermissions.storageclasses"
)
