package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TSOPhysicalShift is the number of logical bits below the physical
// milliseconds in a TSO.
const TSOPhysicalShift = 18

// tsoLayouts are the datetime forms a CompactBackup's startTs and endTs take
// (the TiDB Operator v1.6's): "2006-01-02 15:04:05" and RFC 3339.
var tsoLayouts = []string{"2006-01-02 15:04:05", time.RFC3339}

// ParseTSO reads s as a TSO: a decimal TSO ("443669038716944385") or a
// datetime in one of the forms above. A datetime without zone is read in
// UTC (the zone of the operator's and the Jobs' containers; v1.6 reads it in
// the process's local zone, which is UTC there too). It errors for an
// empty string, any other form, or a time before 1970.
func ParseTSO(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty timestamp")
	}
	if ts, err := strconv.ParseUint(s, 10, 64); err == nil {
		return ts, nil
	}
	for _, layout := range tsoLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.UnixMilli() < 0 {
				return 0, fmt.Errorf("timestamp %q is before 1970", s)
			}
			return uint64(t.UnixMilli()) << TSOPhysicalShift, nil
		}
	}
	return 0, fmt.Errorf("timestamp %q is neither a TSO nor a datetime (2006-01-02 15:04:05 or RFC 3339)", s)
}
