{{/* Chart name, as the TiDB Operator's chart names it. */}}
{{- define "chart.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Name of the controller-manager Deployment (and its metrics Service prefix). */}}
{{- define "tidb-operator.cmName" -}}
{{- if .Values.appendReleaseSuffix -}}
tidb-controller-manager-{{ .Release.Name }}
{{- else -}}
tidb-controller-manager
{{- end -}}
{{- end -}}

{{/* Name of the controller-manager ServiceAccount. */}}
{{- define "tidb-operator.serviceAccount" -}}
{{- if .Values.appendReleaseSuffix -}}
{{ .Values.controllerManager.serviceAccount }}-{{ .Release.Name }}
{{- else -}}
{{ .Values.controllerManager.serviceAccount }}
{{- end -}}
{{- end -}}

{{/* Name of the (Cluster)Role and its binding, as in the TiDB Operator's chart. */}}
{{- define "tidb-operator.rbacName" -}}
{{ .Release.Name }}:tidb-controller-manager
{{- end -}}

{{/* Labels every object of the chart carries. */}}
{{- define "tidb-operator.labels" -}}
app.kubernetes.io/name: {{ template "chart.name" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller-manager
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Selector labels of the controller-manager pods. */}}
{{- define "tidb-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ template "chart.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller-manager
{{- end -}}

{{/*
The controller-manager's rules inside the namespaces it manages, derived from the code (see
docs/user-guide.md "Permissions" for why each is needed). Shared by the ClusterRole (clusterScoped)
and the Role in the release namespace (namespaced mode).
*/}}
{{- define "tidb-operator.rules" -}}
# TidbClusters, Backups, Restores, BackupSchedules: informers (watch; list where the API server
# cannot stream an informer's initial list as a watch). A BackupSchedule re-reads a Backup whose create
# answered AlreadyExists (get); each cluster's discovery Role is granted get on its TidbCluster (and
# each DMCluster's <dc>-dm-discovery Role get on its DMCluster), which RBAC allows only to a holder of it.
- apiGroups: [pingcap.com]
  resources: [tidbclusters, backups, restores, backupschedules]
  verbs: [list, watch]
- apiGroups: [pingcap.com]
  resources: [tidbclusters, dmclusters, backups]
  verbs: [get]
# A TidbCluster's own annotations record rollout progress that must survive an operator restart
# (TiDB's smooth upgrade: tidb.pingcap.com/smooth-upgrade-*), by merge patch.
- apiGroups: [pingcap.com]
  resources: [tidbclusters]
  verbs: [patch]
# Status is written once per sync through the status subresource, as a JSON patch.
- apiGroups: [pingcap.com]
  resources: [tidbclusters/status]
  verbs: [patch]
# An invalid Backup or Restore gets an Invalid condition and phase, patched through the status
# subresource (BackupSchedules have no condition: their validation is reported by events only).
- apiGroups: [pingcap.com]
  resources: [backups/status, restores/status]
  verbs: [patch]
# The Backup and Restore controllers write Scheduled, RetryFailed, Failed, Prepare, Stopped and
# status.backoffRetryStatus through the status subresource (update, guarded by resourceVersion);
# the Backup finalizer tidb.pingcap.com/backup-protection is added and removed by merge patch
# (backups patch, below).
- apiGroups: [pingcap.com]
  resources: [backups/status, restores/status]
  verbs: [update]
# Backup and Restore Jobs run the backup-manager: cached (list/watch, filtered by managed-by
# backup-operator / restore-operator), created, and deleted to retry a failed backup or clean.
# Their ownerReference blocks owner deletion (the finalizers subresource, see tidbclusters).
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create]
- apiGroups: [pingcap.com]
  resources: [backups/finalizers, restores/finalizers]
  verbs: [update]
# BackupSchedules create their Backups, delete old ones and move the log backup's
# spec.logTruncateUntil forward (merge patch); their status (lastBackup, lastBackupTime, ...) is
# patched through the subresource; the created Backups carry the schedule as blockOwnerDeletion
# owner (finalizers, see below); the Job of a Complete Backup is deleted when the next one starts.
- apiGroups: [pingcap.com]
  resources: [backups]
  verbs: [create, delete, patch]
- apiGroups: [pingcap.com]
  resources: [backupschedules/status]
  verbs: [patch]
# A schedule about to create a CompactBackup reads its own status live (get), in case the cache has
# not seen the status write of the sync that created the last one.
- apiGroups: [pingcap.com]
  resources: [backupschedules]
  verbs: [get]
- apiGroups: [pingcap.com]
  resources: [backupschedules/finalizers]
  verbs: [update]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [delete]
# CompactBackups: cached (list/watch) and read live (get) before each status write; state, message
# and retry records written through the status subresource (update, guarded by resourceVersion), as
# their Job's backup-manager writes progress; their Jobs carry them as blockOwnerDeletion owner and
# are deleted (jobs delete, below) once their CompactBackup is gone. BackupSchedules create their
# compactions and garbage-collect old ones (create, delete).
- apiGroups: [pingcap.com]
  resources: [compactbackups]
  verbs: [get, list, watch, create, delete]
- apiGroups: [pingcap.com]
  resources: [compactbackups/status]
  verbs: [update]
- apiGroups: [pingcap.com]
  resources: [compactbackups/finalizers]
  verbs: [update]
# DMClusters: cached (list/watch; get above, for their discovery Roles), status written
# through the subresource (a UID-guarded JSON patch), and the finalizers subresource for the
# blockOwnerDeletion owner references of their children (see tidbclusters below).
- apiGroups: [pingcap.com]
  resources: [dmclusters]
  verbs: [list, watch]
- apiGroups: [pingcap.com]
  resources: [dmclusters/status]
  verbs: [patch]
- apiGroups: [pingcap.com]
  resources: [dmclusters/finalizers]
  verbs: [update]
# Children carry a controller ownerReference with blockOwnerDeletion, which clusters running the
# OwnerReferencesPermissionEnforcement admission plugin (e.g. OpenShift) allow only to users who
# may update the owner's finalizers.
- apiGroups: [pingcap.com]
  resources: [tidbclusters/finalizers]
  verbs: [update]
# TidbInitializers, TidbMonitors, TidbDashboards, TidbNGMonitorings: cached (list/watch; never
# written but for their status), their status written through the subresource (TidbInitializer and
# TidbMonitor by update guarded by resourceVersion, TidbDashboard and TidbNGMonitoring by a UID-guarded
# JSON patch), and the finalizers subresource for the blockOwnerDeletion owner references of their
# children (see tidbclusters above).
- apiGroups: [pingcap.com]
  resources: [tidbinitializers, tidbmonitors, tidbdashboards, tidbngmonitorings]
  verbs: [list, watch]
- apiGroups: [pingcap.com]
  resources: [tidbinitializers/status, tidbmonitors/status]
  verbs: [update]
- apiGroups: [pingcap.com]
  resources: [tidbdashboards/status, tidbngmonitorings/status]
  verbs: [patch]
- apiGroups: [pingcap.com]
  resources: [tidbinitializers/finalizers, tidbmonitors/finalizers, tidbdashboards/finalizers, tidbngmonitorings/finalizers]
  verbs: [update]
# Component and discovery objects: cached by label (list/watch), created and updated by apply;
# suspendAction deletes the components' StatefulSets (delete).
- apiGroups: [""]
  resources: [services, configmaps, serviceaccounts]
  verbs: [get, list, watch, create, update]
# ConfigMaps: after a takeover, the first config change replaces the TiDB Operator's
# <tc>-<component>-<hash> ConfigMap with this operator's and deletes the old one once no pod mounts it.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [delete]
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, create, update, delete]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, update]
# The discovery Role and RoleBinding of each cluster.
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, watch, create, update]
# Pods: cached; TiKV leader-eviction progress is kept in pod annotations (patch); PD failover
# deletes a failed member's pod so that it is recreated empty (delete).
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, patch, delete]
# PVCs: cached; scale-in marks them defer-deleting (patch); scale-out deletes stale ones, PD
# failover the failed member's data volume (delete).
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [list, watch, patch, delete]
# Secrets: get <tc>-cluster-client-secret for TLS clusters; list/watch because the operator grants
# the per-cluster discovery Role get/list/watch on secrets, and RBAC lets a user grant only what it
# holds (the alternative, escalate + bind on roles, would be strictly more power).
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch]
# tidb.initializer.createPassword: the random root password is created once as Secret <tc>-init
# (create only: the operator never updates or deletes a Secret; the TidbCluster owns it).
- apiGroups: [""]
  resources: [secrets]
  verbs: [create]
# Endpoints: the Role <tm>-monitor of each TidbMonitor grants its Prometheus get/list/watch on pods,
# services and endpoints for pod discovery, and RBAC lets the operator grant only what it holds.
- apiGroups: [""]
  resources: [endpoints]
  verbs: [get, list, watch]
# Events on TidbClusters and the other custom resources (create; patch aggregates repeats); a
# member whose pod is not created is explained from its StatefulSet's FailedCreate events (list).
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch, list]
{{- end -}}

{{/*
The cluster-wide rules: what a cluster-scoped operator always holds, and what a namespaced one holds
through controllerManager.clusterPermissions (each passed on as a --cluster-permission-* flag, so the
operator only reads what it may and names the rest in each cluster's Unsupported condition).
Arguments: (dict "nodes" bool "persistentvolumes" bool "storageclasses" bool).
*/}}
{{- define "tidb-operator.clusterRules" -}}
{{- if .persistentvolumes }}
# PersistentVolumes (cluster-scoped): the PVs of cluster PVCs get spec.pvReclaimPolicy and the
# operator's labels (patch), which the label-filtered PV cache watches (list, watch).
- apiGroups: [""]
  resources: [persistentvolumes]
  verbs: [list, watch, patch]
{{- end }}
{{- if .nodes }}
# Nodes (get): a store's and a TiDB server's topology labels come from its pod's node, and
# --detect-node-failure reads the node of a failed member (Ready, RODiskFound).
- apiGroups: [""]
  resources: [nodes]
  verbs: [get]
{{- end }}
{{- if .storageclasses }}
# StorageClasses (get): a PVC grows to a larger requested size only when its class allows expansion.
- apiGroups: [storage.k8s.io]
  resources: [storageclasses]
  verbs: [get]
{{- end }}
{{- end -}}

{{/* Leader election: the Lease in the release namespace. */}}
{{- define "tidb-operator.leaseRules" -}}
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
{{- end -}}
