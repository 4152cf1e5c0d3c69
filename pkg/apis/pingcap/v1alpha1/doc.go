// Package v1alpha1 holds the pingcap.com/v1alpha1 API: TidbCluster, Backup,
// Restore and BackupSchedule. Field names and JSON tags follow the TiDB
// Operator v1 API so that YAML written for it applies unchanged; the package
// imports nothing else of this repository.
//
// +k8s:deepcopy-gen=package
// +groupName=pingcap.com
package v1alpha1
