package tikvapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/tikvapi"
)

// tikvMetrics is an excerpt of a TiKV v8.5 /metrics answer.
const tikvMetrics = `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 1423.51
# HELP tikv_raftstore_apply_log_duration_seconds Bucketed histogram of peer applying log duration.
# TYPE tikv_raftstore_apply_log_duration_seconds histogram
tikv_raftstore_apply_log_duration_seconds_bucket{le="0.0005"} 1031
tikv_raftstore_apply_log_duration_seconds_sum 12.5
# HELP tikv_raftstore_region_count Number of regions collected in region_collector
# TYPE tikv_raftstore_region_count gauge
tikv_raftstore_region_count{type="buckets"} 0
tikv_raftstore_region_count{type="leader"} 34
tikv_raftstore_region_count{type="region"} 100
# HELP tikv_engine_size_bytes Sizes of each column families
# TYPE tikv_engine_size_bytes gauge
tikv_engine_size_bytes{db="kv",type="default"} 1.048576e+06
`

func TestParseLeaderCount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		text    string
		want    int
		wantErr string
		is      error
	}{
		{name: "real TiKV excerpt", text: tikvMetrics, want: 34},
		{name: "other labels in any order", text: `tikv_raftstore_region_count{instance="tikv-0",type="leader",job="tikv"} 7` + "\n", want: 7},
		{name: "spaces, trailing comma and timestamp", text: `tikv_raftstore_region_count{ type = "leader", } 12 1717000000000` + "\n", want: 12},
		{name: "float exponent", text: `tikv_raftstore_region_count{type="leader"} 3.4e+01`, want: 34},
		{name: "escaped quotes in another label", text: `tikv_raftstore_region_count{note="say \"hi\", {x}",type="leader"} 5`, want: 5},
		{name: "zero leaders after eviction", text: `tikv_raftstore_region_count{type="leader"} 0`, want: 0},
		{name: "a longer metric name is another metric", text: "tikv_raftstore_region_count_total{type=\"leader\"} 9\n", is: tikvapi.ErrLeaderCountNotFound},
		{name: "only other types", text: `tikv_raftstore_region_count{type="region"} 100`, is: tikvapi.ErrLeaderCountNotFound},
		{name: "empty", text: "", is: tikvapi.ErrLeaderCountNotFound},
		{name: "comment only", text: `# tikv_raftstore_region_count{type="leader"} 3`, is: tikvapi.ErrLeaderCountNotFound},
		{name: "unterminated label value", text: `tikv_raftstore_region_count{type="leader} 3`, wantErr: "unterminated value"},
		{name: "unquoted label value", text: `tikv_raftstore_region_count{type=leader} 3`, wantErr: "not quoted"},
		{name: "no value", text: `tikv_raftstore_region_count{type="leader"}`, wantErr: "want a value"},
		{name: "NaN", text: `tikv_raftstore_region_count{type="leader"} NaN`, wantErr: "is not a count"},
		{name: "negative", text: `tikv_raftstore_region_count{type="leader"} -1`, wantErr: "is not a count"},
		{name: "garbage value", text: `tikv_raftstore_region_count{type="leader"} many`, wantErr: "invalid syntax"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tikvapi.ParseLeaderCount(strings.NewReader(tc.text))
			switch {
			case tc.is != nil:
				if !errors.Is(err, tc.is) {
					t.Errorf("err = %v, want %v", err, tc.is)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want it to mention %q", err, tc.wantErr)
				}
			case err != nil || got != tc.want:
				t.Errorf("ParseLeaderCount = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestParseLeaderCountLineTooLong(t *testing.T) {
	t.Parallel()
	text := "big_metric " + strings.Repeat("9", 2<<20) + "\n" + `tikv_raftstore_region_count{type="leader"} 1`
	if _, err := tikvapi.ParseLeaderCount(strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), "read metrics") {
		t.Errorf("err = %v, want a read error for an oversized line", err)
	}
}
