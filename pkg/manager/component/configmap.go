package component

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// ConfigFileKey is the ConfigMap key holding a component's TOML config.
const ConfigFileKey = "config-file"

// tomlKey reports whether a ConfigMap key holds TOML (config-file, its
// overlay, Pump's pump-config, TiFlash's *.toml templates): those are
// compared by meaning, every other key (start scripts) byte for byte.
func tomlKey(k string) bool {
	switch k {
	case ConfigFileKey, "config-file-overlay", "pump-config":
		return true
	}
	return strings.HasSuffix(k, ".toml")
}

// ConfigVolumeName is the pod volume that mounts the component's ConfigMap.
const ConfigVolumeName = "config"

// syncConfigMap writes the component's ConfigMap and picks its name.
// InPlace keeps the ConfigMap the pods already mount (updated in place, no
// restart). RollingUpdate names it by a hash of its data, so a change gives
// a new name and rolls the pods — except when the data is semantically equal
// to what the pods already mount, so that reformatting TOML or switching the
// strategy restarts nothing. A mounted ConfigMap another operator wrote (a
// takeover) that means the same is kept untouched; once a real change has
// rolled every pod off it, it is deleted (collectForeignConfigMaps).
func (m *Manager[O]) syncConfigMap(ctx context.Context, st *syncState[O]) error {
	tc := st.tc
	data, err := m.comp.ConfigData(tc)
	if err != nil {
		return err
	}
	if data == nil {
		st.configMap = ""
		return nil
	}
	inUse := configMapInUse(st.live)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: names.Member(tc.GetName(), m.comp.Name()), Namespace: tc.GetNamespace(), Labels: m.owner.Labels(tc, m.comp.Name())},
		Data:       data,
	}
	strategy := configStrategy(m.owner, tc, m.comp)
	same := inUse != "" && m.sameAsInUse(ctx, inUse, cm)
	switch {
	case same && m.foreignConfigMap(tc.GetNamespace(), inUse):
		st.configMap = inUse // another operator's, meaning the same: adopted as it is
		return m.collectForeignConfigMaps(ctx, st)
	case same:
		cm.Name = inUse
	case strategy == v1alpha1.ConfigUpdateStrategyRollingUpdate:
		cm.Name = names.ConfigMapWithHash(tc.GetName(), m.comp.Name(), dataHash(data))
	case inUse != "":
		cm.Name = inUse
	}
	name := cm.Name
	if _, err := m.writer.ConfigMap(ctx, tc, cm); err != nil {
		return err
	}
	st.configMap = name
	return m.collectForeignConfigMaps(ctx, st)
}

// sameAsInUse reports whether the mounted ConfigMap name holds the config
// of desired. One we wrote is cached without its data
// (controller.StripCached): its recorded hash equal to desired's means the
// same data, and only when it differs is the data read from the API to be
// compared by meaning. A failed read counts as different.
func (m *Manager[O]) sameAsInUse(ctx context.Context, name string, desired *corev1.ConfigMap) bool {
	cm, err := m.cms.ConfigMaps(desired.Namespace).Get(name)
	if err != nil {
		return false
	}
	if applied := cm.Annotations[apply.AnnAppliedHash]; applied != "" {
		if h, err := apply.ConfigMapHash(desired); err == nil && h == applied {
			return true
		}
		if cm, err = m.kube.CoreV1().ConfigMaps(desired.Namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false
		}
	}
	return EqualConfigData(cm.Data, desired.Data)
}

// EqualConfigData compares ConfigMap data: every TOML key (tomlKey) by
// meaning (key order, spacing and quoting aside), the start script by the
// server command line it builds (sameScriptMeaning), every other key byte
// for byte. So the ConfigMap another operator (the TiDB Operator v1) made
// for the same cluster is kept, and its pods are not restarted.
func EqualConfigData(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		switch {
		case !ok:
			return false
		case va == vb:
		case tomlKey(k) && strings.TrimSpace(va) == strings.TrimSpace(vb):
		case tomlKey(k) && equalTOML(va, vb):
		case k == StartScriptKey && sameScriptMeaning(va, vb):
		default:
			return false
		}
	}
	return true
}

func equalTOML(a, b string) bool {
	var ma, mb map[string]any
	if toml.Unmarshal([]byte(a), &ma) != nil || toml.Unmarshal([]byte(b), &mb) != nil {
		return false
	}
	return reflect.DeepEqual(ma, mb)
}

// dataHash is the first 7 hex digits of the sha256 of the data's JSON.
func dataHash(data map[string]string) string {
	b, _ := json.Marshal(data) // a map of strings always marshals
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:7]
}

// configMapInUse returns the ConfigMap the live pod template mounts as its
// config volume, or "".
func configMapInUse(live *appsv1.StatefulSet) string {
	if live == nil {
		return ""
	}
	for _, v := range live.Spec.Template.Spec.Volumes {
		if v.Name == ConfigVolumeName && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

// Labels returns the labels of a component's objects: name, managed-by,
// instance and component. The instance is the cluster's own
// app.kubernetes.io/instance label when it has one (Helm compatibility),
// else its name.
func Labels(tc metav1.Object, component string) map[string]string {
	return label.ForCluster(Instance(tc)).Component(component).Labels()
}

// Instance returns the value of app.kubernetes.io/instance for tc's objects.
func Instance(tc metav1.Object) string {
	if v := tc.GetLabels()[label.InstanceLabelKey]; v != "" {
		return v
	}
	return tc.GetName()
}
