package label

// AnnPumpOfflineRequestedAt is the pod annotation recording when the operator's request that the pump
// on the pod go offline was accepted (RFC 3339). With it, the pod of the last pump can be released
// when no pump is left to serve the binlog registry: the pump process that accepted the request has
// exited while its container still runs, which the start script only does after a clean exit, and
// Pump exits cleanly only once it went offline. The key is kubetidb's: the TiDB Operator reads the
// registry from PD's etcd and needs no such record.
const AnnPumpOfflineRequestedAt = "tidb.kubetidb.io/pump-offline-requested-at"
