package validation

import (
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func validCompact() *v1alpha1.CompactBackup {
	return &v1alpha1.CompactBackup{Spec: v1alpha1.CompactSpec{
		StartTs: "2023-01-01 00:00:00", EndTs: "455000614502400000", Concurrency: 4, MaxRetryTimes: 6,
		BR:              &v1alpha1.BRConfig{Cluster: "basic"},
		StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b"}},
	}}
}

func TestValidateCompactBackup(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mutate func(*v1alpha1.CompactSpec)
		want   string // a fragment of the aggregated error; "" for valid
	}{
		"valid":            {func(*v1alpha1.CompactSpec) {}, ""},
		"no startTs":       {func(s *v1alpha1.CompactSpec) { s.StartTs = "" }, "start-ts must be set"},
		"no endTs":         {func(s *v1alpha1.CompactSpec) { s.EndTs = "" }, "end-ts must be set"},
		"bad endTs":        {func(s *v1alpha1.CompactSpec) { s.EndTs = "tomorrow" }, "neither a TSO nor a datetime"},
		"end before start": {func(s *v1alpha1.CompactSpec) { s.EndTs = "2022-01-01T00:00:00Z" }, "must be greater than from-ts"},
		"concurrency 0":    {func(s *v1alpha1.CompactSpec) { s.Concurrency = 0 }, "concurrency must be greater than 0"},
		"negative retries": {func(s *v1alpha1.CompactSpec) { s.MaxRetryTimes = -1 }, "maxRetryTimes must not be negative"},
		"no br":            {func(s *v1alpha1.CompactSpec) { s.BR = nil }, "spec.br: Required"},
		"no cluster":       {func(s *v1alpha1.CompactSpec) { s.BR.Cluster = "" }, "spec.br.cluster: Required"},
		"no storage":       {func(s *v1alpha1.CompactSpec) { s.S3 = nil }, "set exactly one storage provider"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cb := validCompact()
			tc.mutate(&cb.Spec)
			errs := ValidateCompactBackup(cb)
			switch {
			case tc.want == "" && len(errs) != 0:
				t.Fatalf("want valid, got %v", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
				t.Fatalf("want an error with %q, got %v", tc.want, errs)
			}
		})
	}
}

func TestParseTSO(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]uint64{
		"443669038716944385":   443669038716944385,
		"1970-01-01 00:00:01":  1000 << v1alpha1.TSOPhysicalShift,
		"1970-01-01T00:00:01Z": 1000 << v1alpha1.TSOPhysicalShift,
	} {
		if got, err := v1alpha1.ParseTSO(in); err != nil || got != want {
			t.Errorf("ParseTSO(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "1960-01-01 00:00:00"} {
		if _, err := v1alpha1.ParseTSO(bad); err == nil {
			t.Errorf("ParseTSO(%q) succeeded", bad)
		}
	}
}
