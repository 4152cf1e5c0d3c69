package ticdc

import (
	"context"
	"strconv"
	"strings"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

// drainFromVersion is the first TiCDC that drains a capture towards another version (TiCDC's graceful
// upgrade came with v6.3.0).
var drainFromVersion = version{6, 3, 0}

// drainsAcross reports whether the capture captureID on podName should be drained before it restarts
// on the target version (the tag of the image the spec asks for), with the TiDB Operator's rule: always
// on the same version (a restart for a new config); across versions only from v6.3.0 on and to a version
// below the next-but-one major (v6.5 → v7.x drains, v6.5 → v8.x does not). A version that does not
// parse means no drain, as in the TiDB Operator. The capture's version comes from status when the
// capture is the one observed there, else from its /status; it errors when that cannot be read.
func (c *Component) drainsAcross(ctx context.Context, tc *v1alpha1.TidbCluster, podName, captureID string) (bool, error) {
	running := ""
	if cp, ok := tc.Status.TiCDC.Captures[podName]; ok && cp.ID == captureID {
		running = cp.Version
	}
	if running == "" {
		status, err := c.cdc.GetStatus(ctx, tc.Namespace, tc.Name, podName, ClientOptions(tc))
		if err != nil {
			return false, err
		}
		running = status.Version
	}
	image := defaulting.NewComponentAccessor(tc, defaulting.ComponentTiCDC).Image()
	target := image[strings.LastIndexByte(image, ':')+1:]
	from, okFrom := parseVersion(running)
	to, okTo := parseVersion(target)
	drain := okFrom && okTo && (from == to || !from.less(drainFromVersion) && to.less(version{from[0] + 2, 0, 0}))
	if !drain {
		klog.FromContext(ctx).Info("restarting the TiCDC capture without draining it: TiCDC cannot move its tables across these versions",
			"pod", klog.KRef(tc.Namespace, podName), "from", running, "to", target)
	}
	return drain, nil
}

// version is major, minor, patch.
type version [3]int

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// parseVersion reads "v8.5.0", "8.5.0" or "v8.5.0-pre…" (a pre-release or build suffix is ignored).
func parseVersion(s string) (version, bool) {
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return version{}, false
	}
	var v version
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return version{}, false
		}
		v[i] = n
	}
	return v, true
}
