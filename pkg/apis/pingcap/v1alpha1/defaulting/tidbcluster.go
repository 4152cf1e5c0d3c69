// Package defaulting fills in the defaults of the pingcap.com/v1alpha1 kinds
// and resolves the effective per-component values (ComponentAccessor).
//
// Defaults are applied in memory, at the top of every sync, to a deep copy the
// caller owns, and are never written back to the API server, because a
// persisted default would freeze today's default into the user's object. Every
// Set*Defaults function is pure (no clients, clocks or I/O), accepts nil,
// never overwrites a value the user set, and is idempotent: applying it twice
// gives the same object as applying it once.
package defaulting

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
)

// Defaults of the TidbCluster spec (spec §2.1–2.3).
const (
	defaultMaxFailoverCount        int32 = 3
	defaultSpareVolReplaceReplicas int32 = 1
	defaultScaleParallelism        int32 = 1
	defaultTiDBLogMaxBackups       int64 = 3
	defaultPDStartTimeout                = 30
	defaultHelperImage                   = "busybox:1.26.2"
	defaultTimezone                      = "UTC"
	defaultEvictLeaderTimeout            = "1500m"
	defaultWaitLeaderTransferBack        = 400 * time.Second
	defaultTiCDCGracefulShutdown         = 10 * time.Minute
)

// SetTidbClusterDefaults sets the defaults of spec §2.1–2.3 on tc in place:
// cluster-level pull policy, timezone, PV reclaim settings, TLS and helper
// image; per component (each of which may be nil and is then left nil) the
// base image, failover and spare-volume counts, scale parallelism and the
// TiKV, TiDB, PD and TiCDC specific defaults. Call it on a deep copy you own;
// it never errors and is a no-op for a nil tc.
func SetTidbClusterDefaults(tc *v1alpha1.TidbCluster) {
	if tc == nil {
		return
	}
	s := &tc.Spec
	setClusterDefaults(s)
	for _, d := range components.All {
		setSharedDefaults(d, s)
	}
	setPDDefaults(s)
	setPDMSDefaults(s)
	setTiKVDefaults(s)
	setTiDBDefaults(s)
	setTiCDCDefaults(s)
}

// setSharedDefaults fills what d's descriptor says its spec shares with
// others: the base image, and where the component has them the failover
// and spare-volume counts and the scale parallelism. An absent component
// is left nil.
func setSharedDefaults(d *components.Descriptor, s *v1alpha1.TidbClusterSpec) {
	f, ok := d.Spec(s)
	if !ok {
		return
	}
	*f.BaseImage = baseImageDefault(Component(d.Name), *f.BaseImage, f.Spec, s.Version)
	if f.MaxFailoverCount != nil {
		setIfNil(f.MaxFailoverCount, defaultMaxFailoverCount)
	}
	if f.SpareVolReplaceReplicas != nil {
		setIfNil(f.SpareVolReplaceReplicas, defaultSpareVolReplaceReplicas)
	}
	if f.ScalePolicy != nil {
		setScalePolicyDefaults(f.ScalePolicy)
	}
}

func setClusterDefaults(s *v1alpha1.TidbClusterSpec) {
	if s.ImagePullPolicy == "" {
		s.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if s.Timezone == "" {
		s.Timezone = defaultTimezone
	}
	if s.PVReclaimPolicy == nil {
		s.PVReclaimPolicy = ptr(corev1.PersistentVolumeReclaimRetain)
	}
	if s.EnablePVReclaim == nil {
		s.EnablePVReclaim = ptr(false)
	}
	if s.TLSCluster == nil {
		s.TLSCluster = &v1alpha1.TLSCluster{Enabled: false}
	}
	if s.Helper == nil {
		s.Helper = &v1alpha1.HelperSpec{}
	}
	if s.Helper.Image == nil || *s.Helper.Image == "" {
		s.Helper.Image = ptr(defaultHelperImage)
	}
}

func setPDDefaults(s *v1alpha1.TidbClusterSpec) {
	pd := s.PD
	if pd == nil {
		return
	}
	// StartTimeout is a plain int: zero and negative cannot be told from unset.
	if pd.StartTimeout <= 0 {
		pd.StartTimeout = defaultPDStartTimeout
	}
}

// setPDMSDefaults gives every PD micro-service the PD image and start timeout;
// nil entries of the list are skipped (validation reports nothing for them).
func setPDMSDefaults(s *v1alpha1.TidbClusterSpec) {
	for _, ms := range s.PDMS {
		if ms == nil {
			continue
		}
		base := ""
		if ms.BaseImage != nil {
			base = *ms.BaseImage
		}
		if base = baseImageDefault(ComponentPD, base, &ms.ComponentSpec, s.Version); base != "" {
			ms.BaseImage = ptr(base)
		}
		if ms.StartTimeout <= 0 {
			ms.StartTimeout = defaultPDStartTimeout
		}
	}
}

func setTiKVDefaults(s *v1alpha1.TidbClusterSpec) {
	kv := s.TiKV
	if kv == nil {
		return
	}
	if kv.EvictLeaderTimeout == nil || *kv.EvictLeaderTimeout == "" {
		kv.EvictLeaderTimeout = ptr(defaultEvictLeaderTimeout)
	}
	setIfNil(&kv.WaitLeaderTransferBackTimeout, metav1.Duration{Duration: defaultWaitLeaderTransferBack})
}

func setTiDBDefaults(s *v1alpha1.TidbClusterSpec) {
	db := s.TiDB
	if db == nil {
		return
	}
	setIfNil(&db.SeparateSlowLog, true)
	if db.Service != nil {
		setIfNil(&db.Service.ExposeStatus, true)
	}
	// Only a config the user set gets the default, as in the TiDB Operator:
	// without a config TiDB runs with its built-in defaults.
	if db.Config != nil {
		setConfigDefault(db.Config, defaultTiDBLogMaxBackups, "log", "file", "max-backups")
	}
}

func setTiCDCDefaults(s *v1alpha1.TidbClusterSpec) {
	cdc := s.TiCDC
	if cdc == nil {
		return
	}
	setIfNil(&cdc.GracefulShutdownTimeout, metav1.Duration{Duration: defaultTiCDCGracefulShutdown})
}

// baseImageDefault returns the baseImage to store: the user's, else the
// default image unless only a deprecated image without version is given
// (see resolveBaseImage), so that ComponentAccessor.Image gives the same
// answer before and after defaulting.
func baseImageDefault(c Component, baseImage string, cs *v1alpha1.ComponentSpec, clusterVersion string) string {
	return resolveBaseImage(c, baseImage, cs.Image, componentVersion(cs, clusterVersion))
}

func setScalePolicyDefaults(p *v1alpha1.ScalePolicy) {
	setIfNil(&p.ScaleInParallelism, defaultScaleParallelism)
	setIfNil(&p.ScaleOutParallelism, defaultScaleParallelism)
}

// setConfigDefault sets the key at path to value unless the key is present.
// It leaves the config alone when an intermediate key holds something other
// than a table, because overwriting it would change the user's config.
func setConfigDefault(c *v1alpha1.Config, value any, path ...string) {
	if c.Items == nil {
		c.Items = map[string]any{}
	}
	table := c.Items
	for _, key := range path[:len(path)-1] {
		next, present := table[key]
		if !present {
			child := map[string]any{}
			table[key] = child
			table = child
			continue
		}
		child, ok := next.(map[string]any)
		if !ok {
			return
		}
		table = child
	}
	last := path[len(path)-1]
	if _, present := table[last]; !present {
		table[last] = value
	}
}

func setIfNil[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}

func ptr[T any](v T) *T { return &v }
