package label

// AnnReplaceVolume on a PD, TiKV, TiFlash or TiDB pod (value
// ReplaceVolumeTrue) asks for the member's volumes to be replaced (spec
// §6.4): the member leaves its cluster (PD member deleted, store
// Tombstone), then its PVCs and the pod are deleted so that the
// StatefulSet creates it again on fresh volumes. The operator sets it
// itself for spec.enablePVCReplace. The recreated pod does not carry it.
const AnnReplaceVolume = "tidb.pingcap.com/replace-volume"

// ReplaceVolumeTrue is the one value of AnnReplaceVolume acted on.
const ReplaceVolumeTrue = "true"
