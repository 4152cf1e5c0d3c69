package label

// Pod annotations a user sets for maintenance, acted on by the TidbCluster
// sync (spec §6.4), and their values.
const (
	// AnnTiKVEvictLeader on a TiKV pod asks for the region leaders of its
	// store to be evicted (PD's evict-leader scheduler) for as long as it
	// is set: EvictLeaderNone keeps the pod, EvictLeaderDeletePod deletes it
	// once the store holds no leader (eviction ends once the recreated pod
	// is Ready).
	AnnTiKVEvictLeader = "tidb.pingcap.com/evict-leader"
	// AnnTiKVEvictLeaderExpiration (RFC 3339) on a TiKV pod ends an
	// evict-leader request at that time: both annotations are removed.
	AnnTiKVEvictLeaderExpiration = "tidb.pingcap.com/tikv-evict-leader-expiration-time"
	// AnnPDTransferLeader on a PD pod asks for PD leadership to move off
	// it (EvictLeaderNone), then for the pod to be deleted
	// (EvictLeaderDeletePod).
	AnnPDTransferLeader = "tidb.pingcap.com/pd-transfer-leader"
	// AnnPDTransferLeaderExpiration (RFC 3339) on a PD pod ends a
	// transfer-leader request at that time: both annotations are removed.
	AnnPDTransferLeaderExpiration = "tidb.pingcap.com/pd-evict-leader-expiration-time"
	// AnnTiDBGracefulShutdown on a TiDB pod (value EvictLeaderDeletePod)
	// asks for the pod to be deleted once no component upgrades or scales.
	AnnTiDBGracefulShutdown = "tidb.pingcap.com/tidb-graceful-shutdown"

	// EvictLeaderNone moves leadership off the pod and keeps it running.
	EvictLeaderNone = "none"
	// EvictLeaderDeletePod moves leadership off the pod, then deletes it.
	EvictLeaderDeletePod = "delete-pod"
)

// MinReadySecondsAnnotation is the TidbCluster annotation
// tidb.pingcap.com/<component>-min-ready-seconds: how long a restarted pod
// of the component (pd, tikv, tidb, tiflash) must have been Ready before
// the rollout restarts the next one.
func MinReadySecondsAnnotation(component string) string {
	return "tidb.pingcap.com/" + component + "-min-ready-seconds"
}
