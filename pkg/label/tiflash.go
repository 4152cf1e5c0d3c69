package label

// AnnTiFlashProxyPrometheusPort is the extra pod annotation naming the port
// of the TiFlash proxy's metrics, TiFlash pods having two metrics endpoints
// (the prometheus.io annotations name TiFlash's own). The scrape path is the
// same, /metrics.
const AnnTiFlashProxyPrometheusPort = "tiflash.proxy.prometheus.io/port"
