package label

// The PiTR restore's TiKV GC overlay (spec §9): while a point-in-time
// restore runs against a TidbCluster, TiKV runs with
// gc.ratio-threshold = -1 (TiKV's GC of compacted versions is off, so the
// restored versions are not collected under the restore's feet), and gets
// the user's value back afterwards.
const (
	// AnnPiTRRestore, on a TidbCluster, names the PiTR Restore running
	// against it as "<namespace>/<name>". The Restore controller sets it
	// before the restore Job starts and removes it once the Restore is
	// Complete or Failed (or gone); while it is set, TiKV's config carries
	// TiKVGCOverlay and its pod template AnnTiKVConfigOverlay, so TiKV
	// restarts with the overlay, and again without it afterwards.
	AnnPiTRRestore = "tidb.pingcap.com/pitr-restore"
	// AnnTiKVConfigOverlay, on TiKV's pod template, is the config overlay
	// its pods run with (TiKVGCOverlay). Its change restarts TiKV also
	// under configUpdateStrategy InPlace, and the Restore controller reads
	// it to know when TiKV's rollout carries the overlay.
	AnnTiKVConfigOverlay = "tidb.pingcap.com/tikv-config-overlay"
	// TiKVGCOverlay is the value of AnnTiKVConfigOverlay: the TiKV config
	// key and value a PiTR restore overrides.
	TiKVGCOverlay = "gc.ratio-threshold=-1"
)
