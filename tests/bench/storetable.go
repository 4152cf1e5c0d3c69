//go:build bench

package main

import "fmt"

// rowFunc adds one row to the round table: its name, the reference column
// and the cell of each round.
type rowFunc func(name, ref string, f func(r *Round) string)

// writeStoreRows adds what a converged cluster costs against its store
// count (issue 36): the idle window's syncs, the operator's CPU per sync,
// and the idle CPU and PD/TiDB requests per cluster-minute, whole and ÷
// the stores, so that rounds of different sizes show whether the cost
// grows faster than the stores.
func writeStoreRows(row rowFunc) {
	row("stores per cluster (TiKV + TiFlash)", "", func(r *Round) string { return fmt.Sprint(stores(r)) })
	row("converged: syncs/cluster/min; CPU ms/sync", "", func(r *Round) string {
		return f2(r.Steady.SyncsPerClusterMin) + "; " + f2(r.Steady.CPUMsPerSync)
	})
	row("  idle CPU ms/cluster/min; PD+TiDB req/cluster/min", "", func(r *Round) string {
		return f1(idleCPUMsPerClusterMin(r)) + "; " + f2(idlePDTiDB(r))
	})
	row("  the same ÷ stores", "", func(r *Round) string {
		n := float64(stores(r))
		return f2(ratio(idleCPUMsPerClusterMin(r), n)) + "; " + f2(ratio(idlePDTiDB(r), n))
	})
}

// stores is the round's stores per cluster; results written before the
// field existed take it from the shape.
func stores(r *Round) int {
	if r.StoresPerCluster > 0 {
		return r.StoresPerCluster
	}
	if tc, _, err := loadShape(r.Shape); err == nil {
		return storesPerCluster(tc)
	}
	return 0
}

// idleCPUMsPerClusterMin is the operator's CPU in the idle window, in ms
// per cluster-minute.
func idleCPUMsPerClusterMin(r *Round) float64 {
	return 1000 * r.Steady.CPUSecondsPerMinute / float64(r.N)
}

// idlePDTiDB is the PD and TiDB requests per cluster-minute of the idle
// window (issue 36 bounds them at 2 whatever the size).
func idlePDTiDB(r *Round) float64 {
	c := r.Steady.ByComponentPerClusterMin
	return c["pd"] + c["tidb"]
}
