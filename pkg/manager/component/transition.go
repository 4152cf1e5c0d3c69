package component

import (
	"context"
	"sync"

	"github.com/pelletier/go-toml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// LiveReader is a Component with more to read back from its live
// StatefulSet for the update rules than the skeleton reads (instance
// label, mounted config): TiDB's bootstrap SQL ConfigMap. ReadLive fills
// rec from live and must not change live.
type LiveReader interface {
	ReadLive(live *appsv1.StatefulSet, rec *validation.Live)
}

// CheckLive returns the update rules tc breaks against what the
// component's live objects were built from (validation.ValidateLive): the
// operator never sees the old object of an update, so the live
// StatefulSet and the ConfigMap its pods mount stand in for it. It is
// called before the sync's first write, so a refused change is never half
// applied. Nothing is checked before the StatefulSet exists. It reads the
// caches, and the API once only when PD's rendered config differs from the
// recorded hash of the one its pods mount (the cache holds no data of ours).
func (m *Manager[O]) CheckLive(ctx context.Context, tc O) field.ErrorList {
	if !m.comp.Enabled(tc) {
		return nil
	}
	live, err := m.sts.StatefulSets(tc.GetNamespace()).Get(names.Member(tc.GetName(), m.comp.Name()))
	if err != nil {
		return nil // none yet (or not cached): nothing was built to compare with
	}
	mounted := m.renderedConfigMap(tc, live)
	key := liveKey(tc, live, mounted)
	if m.liveChecked.has(tc.GetUID(), key) {
		return nil
	}
	data, err := m.comp.ConfigData(tc)
	if err != nil {
		return nil // CheckObjects reports it
	}
	rec := validation.Live{Component: m.comp.Name(), Instance: live.Labels[label.InstanceLabelKey], RendersConfig: data != nil}
	if mounted != nil {
		rec.ConfigMap = mounted.Name
	}
	if r, ok := m.comp.(LiveReader); ok {
		r.ReadLive(live, &rec)
	}
	if mounted != nil && data != nil && validation.ComparesMountedConfig(m.comp.Name()) {
		rec.MountedConfig, rec.DesiredConfig = m.configFiles(ctx, tc, mounted, data)
	}
	errs := m.owner.ValidateLive(tc, rec)
	if len(errs) == 0 {
		m.liveChecked.add(tc.GetUID(), key)
	}
	return errs
}

// liveKey names the versions CheckLive read: the cluster's (spec and
// labels), its StatefulSet's and the mounted ConfigMap's; "" when one is
// not versioned (objects that were never stored), which is never cached.
func liveKey(tc metav1.Object, live *appsv1.StatefulSet, cm *corev1.ConfigMap) string {
	cmVersion := "-"
	if cm != nil {
		cmVersion = cm.ResourceVersion
	}
	if tc.GetResourceVersion() == "" || live.ResourceVersion == "" || cmVersion == "" {
		return ""
	}
	return tc.GetResourceVersion() + "/" + live.ResourceVersion + "/" + cmVersion
}

// liveChecks remembers, per TidbCluster, the versions (liveKey) that last
// passed CheckLive: nothing it reads has changed since, so a converged
// resync does not render the config again only to compare it. Entries of
// deleted clusters are dropped all at once past maxLiveChecks. Safe for
// concurrent workers.
type liveChecks struct {
	mu     sync.Mutex
	passed map[types.UID]string
}

const maxLiveChecks = 20000

func (c *liveChecks) has(uid types.UID, key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return key != "" && c.passed[uid] == key
}

func (c *liveChecks) add(uid types.UID, key string) {
	if key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.passed == nil || len(c.passed) >= maxLiveChecks {
		c.passed = map[types.UID]string{}
	}
	c.passed[uid] = key
}

// renderedConfigMap returns the cached ConfigMap live's pods mount as their
// config when an operator rendered it from the spec — ours (recorded hash)
// or the TiDB Operator's (controlled by tc) — and nil for none, one not
// cached, or one made by hand or by Helm.
func (m *Manager[O]) renderedConfigMap(tc O, live *appsv1.StatefulSet) *corev1.ConfigMap {
	name := configMapInUse(live)
	if name == "" {
		return nil
	}
	cm, err := m.cms.ConfigMaps(tc.GetNamespace()).Get(name)
	if err != nil {
		return nil
	}
	if cm.Annotations[apply.AnnAppliedHash] == "" && !metav1.IsControlledBy(cm, tc) {
		return nil
	}
	return cm
}

// configFiles returns the config file mounted (cm) and the one desired data
// holds, parsed, or nils when they are the same ConfigMap data (the
// recorded hash equals desired's) or either cannot be read.
func (m *Manager[O]) configFiles(ctx context.Context, tc O, cm *corev1.ConfigMap,
	data map[string]string) (mounted, desired map[string]any) {
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: tc.GetNamespace(), Labels: m.owner.Labels(tc, m.comp.Name())}, Data: data}
	if applied := cm.Annotations[apply.AnnAppliedHash]; applied != "" {
		if h, err := apply.ConfigMapHash(want); err == nil && h == applied {
			return nil, nil
		}
		read, err := m.kube.CoreV1().ConfigMaps(tc.GetNamespace()).Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil {
			return nil, nil
		}
		cm = read
	}
	if toml.Unmarshal([]byte(cm.Data[ConfigFileKey]), &mounted) != nil || toml.Unmarshal([]byte(data[ConfigFileKey]), &desired) != nil {
		return nil, nil
	}
	return mounted, desired
}
