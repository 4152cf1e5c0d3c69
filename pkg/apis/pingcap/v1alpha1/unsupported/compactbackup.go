package unsupported

import (
	"slices"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// compactBR is why a CompactBackup's br fields other than cluster and
// clusterNamespace are not acted on: the compaction runs no BR against the
// cluster (the TiDB Operator v1.6 ignores them too).
const compactBR = "a compaction reads only br.cluster and br.clusterNamespace, for the TiKV version"

// CompactBackup lists the CompactBackup fields nothing acts on.
var CompactBackup = slices.Concat(
	storageFields("spec", func(cb *v1alpha1.CompactBackup) *v1alpha1.StorageProvider { return &cb.Spec.StorageProvider }),
	compactBRFields(),
)

// compactBRFields are the br fields of a CompactBackup nothing reads.
func compactBRFields() []Field[v1alpha1.CompactBackup] {
	fields := []struct {
		path string
		set  func(*v1alpha1.BRConfig) bool
		ex   func(*v1alpha1.BRConfig)
	}{
		{"db", func(b *v1alpha1.BRConfig) bool { return b.DB != "" }, func(b *v1alpha1.BRConfig) { b.DB = "test" }},
		{"table", func(b *v1alpha1.BRConfig) bool { return b.Table != "" }, func(b *v1alpha1.BRConfig) { b.Table = "t" }},
		{"logLevel", func(b *v1alpha1.BRConfig) bool { return b.LogLevel != "" }, func(b *v1alpha1.BRConfig) { b.LogLevel = "debug" }},
		{"statusAddr", func(b *v1alpha1.BRConfig) bool { return b.StatusAddr != "" },
			func(b *v1alpha1.BRConfig) { b.StatusAddr = "0.0.0.0:8080" }},
		{"concurrency", func(b *v1alpha1.BRConfig) bool { return b.Concurrency != nil },
			func(b *v1alpha1.BRConfig) { b.Concurrency = ptr[uint32](4) }},
		{"rateLimit", func(b *v1alpha1.BRConfig) bool { return b.RateLimit != nil }, func(b *v1alpha1.BRConfig) { b.RateLimit = ptr[uint](1) }},
		{"timeAgo", func(b *v1alpha1.BRConfig) bool { return b.TimeAgo != "" }, func(b *v1alpha1.BRConfig) { b.TimeAgo = "1m" }},
		{"checksum", func(b *v1alpha1.BRConfig) bool { return b.Checksum != nil }, func(b *v1alpha1.BRConfig) { b.Checksum = ptr(true) }},
		{"checkRequirements", func(b *v1alpha1.BRConfig) bool { return b.CheckRequirements != nil },
			func(b *v1alpha1.BRConfig) { b.CheckRequirements = ptr(true) }},
		{"sendCredToTikv", func(b *v1alpha1.BRConfig) bool { return b.SendCredToTikv != nil },
			func(b *v1alpha1.BRConfig) { b.SendCredToTikv = ptr(true) }},
		{"onLine", func(b *v1alpha1.BRConfig) bool { return b.OnLine != nil }, func(b *v1alpha1.BRConfig) { b.OnLine = ptr(true) }},
		{"options", func(b *v1alpha1.BRConfig) bool { return len(b.Options) > 0 },
			func(b *v1alpha1.BRConfig) { b.Options = []string{"--foo"} }},
	}
	out := make([]Field[v1alpha1.CompactBackup], 0, len(fields))
	for _, f := range fields {
		out = append(out, compactField("spec.br."+f.path, compactBR,
			func(s *v1alpha1.CompactSpec) bool { return s.BR != nil && f.set(s.BR) },
			func(s *v1alpha1.CompactSpec) {
				s.BR = &v1alpha1.BRConfig{Cluster: "basic"}
				f.ex(s.BR)
			}))
	}
	return out
}

// compactField is one CompactSpec field at path.
func compactField(path, why string, set func(*v1alpha1.CompactSpec) bool,
	example func(*v1alpha1.CompactSpec)) Field[v1alpha1.CompactBackup] {
	return Field[v1alpha1.CompactBackup]{Path: path, Why: why,
		Set:     func(cb *v1alpha1.CompactBackup) bool { return set(&cb.Spec) },
		Example: func(cb *v1alpha1.CompactBackup) { example(&cb.Spec) }}
}
