package names

// The names of a DMCluster's objects (TiDB Data Migration), as the TiDB
// Operator gives them: every name is prefixed by the DMCluster name <dc> and
// "-dm-", so that a DMCluster and a TidbCluster of the same name do not clash.
const (
	// DMMasterComponent is dm-master's `app.kubernetes.io/component` label value.
	DMMasterComponent = "dm-master"
	// DMWorkerComponent is dm-worker's `app.kubernetes.io/component` label value.
	DMWorkerComponent = "dm-worker"
	// DMClusterLabelName is the `app.kubernetes.io/name` label value of every DM object.
	DMClusterLabelName = "dm-cluster"
)

// DMMaster returns "<dc>-dm-master": dm-master's StatefulSet, client Service
// (port 8261) and ConfigMap (InPlace strategy).
func DMMaster(dc string) string { return dc + "-" + DMMasterComponent }

// DMMasterPeer returns "<dc>-dm-master-peer", dm-master's headless Service.
func DMMasterPeer(dc string) string { return DMMaster(dc) + "-peer" }

// DMWorker returns "<dc>-dm-worker": dm-worker's StatefulSet and ConfigMap.
func DMWorker(dc string) string { return dc + "-" + DMWorkerComponent }

// DMWorkerPeer returns "<dc>-dm-worker-peer", dm-worker's headless Service.
func DMWorkerPeer(dc string) string { return DMWorker(dc) + "-peer" }

// DMDiscovery returns "<dc>-dm-discovery": the DM discovery Deployment,
// Service, ServiceAccount, Role and RoleBinding.
func DMDiscovery(dc string) string { return dc + "-dm-discovery" }

// DMMasterPod returns "<dc>-dm-master-<ordinal>", a dm-master pod and member name.
func DMMasterPod(dc string, ordinal int32) string { return Pod(dc, DMMasterComponent, ordinal) }

// DMWorkerPod returns "<dc>-dm-worker-<ordinal>", a dm-worker pod and worker name.
func DMWorkerPod(dc string, ordinal int32) string { return Pod(dc, DMWorkerComponent, ordinal) }

// DMClientSecret returns "<dc>-dm-client-secret", the client certificate the
// operator and discovery present to dm-master when spec.tlsCluster.enabled.
func DMClientSecret(dc string) string { return dc + "-dm-client-secret" }

// DMClusterSecret returns "<dc>-<component>-cluster-secret" for component
// dm-master or dm-worker: the server certificate of its pods.
func DMClusterSecret(dc, component string) string { return dc + "-" + component + "-cluster-secret" }
