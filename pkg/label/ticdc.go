package label

// AnnTiCDCGracefulShutdownBeginTime is the pod annotation recording when the operator began the
// graceful shutdown of the TiCDC capture on the pod (RFC 3339): draining its tables and handing the
// owner role over before the pod restarts or is removed. The wait is bounded by
// spec.ticdc.gracefulShutdownTimeout from this time, so an operator that restarts resumes the same wait.
const AnnTiCDCGracefulShutdownBeginTime = "tidb.pingcap.com/ticdc-graceful-shutdown-begin-time"
