package defaulting

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

var (
	clusterAffinity   = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	componentAffinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
	clusterTols       = []corev1.Toleration{{Key: "cluster"}}
	componentTols     = []corev1.Toleration{{Key: "component"}}
)

// clusterOnly sets every inheritable field at cluster level and has an empty TiKV.
func clusterOnly() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{
		Version:                   "v8.5.0",
		ServiceAccount:            "cluster-sa",
		TiKV:                      &v1alpha1.TiKVSpec{},
		ImagePullPolicy:           corev1.PullAlways,
		ImagePullSecrets:          []corev1.LocalObjectReference{{Name: "cluster-secret"}},
		HostNetwork:               ptr(true),
		Affinity:                  clusterAffinity,
		PriorityClassName:         ptr("cluster-pc"),
		SchedulerName:             "cluster-sched",
		NodeSelector:              map[string]string{"a": "cluster", "b": "cluster"},
		Labels:                    map[string]string{"l": "cluster"},
		Annotations:               map[string]string{"x": "cluster"},
		Tolerations:               clusterTols,
		PodSecurityContext:        &corev1.PodSecurityContext{RunAsUser: ptr[int64](1)},
		DNSConfig:                 &corev1.PodDNSConfig{Searches: []string{"cluster"}},
		ConfigUpdateStrategy:      v1alpha1.ConfigUpdateStrategyRollingUpdate,
		StatefulSetUpdateStrategy: appsv1.OnDeleteStatefulSetStrategyType,
		PodManagementPolicy:       appsv1.OrderedReadyPodManagement,
		TopologySpreadConstraints: []v1alpha1.TopologySpreadConstraint{{TopologyKey: "zone"}},
		SuspendAction:             &v1alpha1.SuspendAction{SuspendStatefulSet: true},
	}}
}

// bothLevels is clusterOnly with every field also set on TiKV.
func bothLevels() *v1alpha1.TidbCluster {
	tc := clusterOnly()
	tc.Spec.TiKV = &v1alpha1.TiKVSpec{
		BaseImage:      "reg/tikv",
		ServiceAccount: "tikv-sa",
		ComponentSpec: v1alpha1.ComponentSpec{
			Version:                       ptr("v7.5.0"),
			ImagePullPolicy:               ptr(corev1.PullNever),
			ImagePullSecrets:              []corev1.LocalObjectReference{{Name: "tikv-secret"}},
			HostNetwork:                   ptr(false),
			Affinity:                      componentAffinity,
			PriorityClassName:             ptr("tikv-pc"),
			SchedulerName:                 ptr("tikv-sched"),
			NodeSelector:                  map[string]string{"b": "tikv", "c": "tikv"},
			Labels:                        map[string]string{"m": "tikv"},
			Annotations:                   map[string]string{"x": "tikv"},
			Tolerations:                   componentTols,
			PodSecurityContext:            &corev1.PodSecurityContext{RunAsUser: ptr[int64](2)},
			DNSConfig:                     &corev1.PodDNSConfig{Searches: []string{"tikv"}},
			DNSPolicy:                     corev1.DNSDefault,
			ConfigUpdateStrategy:          ptr(v1alpha1.ConfigUpdateStrategyInPlace),
			StatefulSetUpdateStrategy:     appsv1.RollingUpdateStatefulSetStrategyType,
			PodManagementPolicy:           appsv1.ParallelPodManagement,
			TopologySpreadConstraints:     []v1alpha1.TopologySpreadConstraint{{TopologyKey: "host"}},
			SuspendAction:                 &v1alpha1.SuspendAction{},
			TerminationGracePeriodSeconds: ptr[int64](5),
			Env:                           []corev1.EnvVar{{Name: "E", Value: "v"}},
			EnvFrom:                       []corev1.EnvFromSource{{Prefix: "P"}},
			InitContainers:                []corev1.Container{{Name: "init"}},
			AdditionalContainers:          []corev1.Container{{Name: "side"}},
			AdditionalVolumes:             []corev1.Volume{{Name: "vol"}},
			AdditionalVolumeMounts:        []corev1.VolumeMount{{Name: "vol"}},
		},
	}
	return tc
}

type accessorCase struct {
	name string
	tc   *v1alpha1.TidbCluster
	comp Component
	get  func(ComponentAccessor) any
	want any
}

func runAccessorCases(t *testing.T, cases []accessorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			before := c.tc.DeepCopy()
			got := c.get(NewComponentAccessor(c.tc, c.comp))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, c.tc, cmpOpts); diff != "" {
				t.Errorf("accessor changed the cluster (-before +after):\n%s", diff)
			}
		})
	}
}

func TestComponentAccessorInheritance(t *testing.T) {
	t.Parallel()
	get := map[string]func(ComponentAccessor) any{
		"Version":                   func(a ComponentAccessor) any { return a.Version() },
		"Image":                     func(a ComponentAccessor) any { return a.Image() },
		"ImagePullPolicy":           func(a ComponentAccessor) any { return a.ImagePullPolicy() },
		"ImagePullSecrets":          func(a ComponentAccessor) any { return a.ImagePullSecrets() },
		"ServiceAccount":            func(a ComponentAccessor) any { return a.ServiceAccount() },
		"HostNetwork":               func(a ComponentAccessor) any { return a.HostNetwork() },
		"Affinity":                  func(a ComponentAccessor) any { return a.Affinity() },
		"PriorityClassName":         func(a ComponentAccessor) any { return a.PriorityClassName() },
		"SchedulerName":             func(a ComponentAccessor) any { return a.SchedulerName() },
		"NodeSelector":              func(a ComponentAccessor) any { return a.NodeSelector() },
		"Labels":                    func(a ComponentAccessor) any { return a.Labels() },
		"Annotations":               func(a ComponentAccessor) any { return a.Annotations() },
		"Tolerations":               func(a ComponentAccessor) any { return a.Tolerations() },
		"PodSecurityContext":        func(a ComponentAccessor) any { return a.PodSecurityContext() },
		"DNSConfig":                 func(a ComponentAccessor) any { return a.DNSConfig() },
		"DNSPolicy":                 func(a ComponentAccessor) any { return a.DNSPolicy() },
		"ConfigUpdateStrategy":      func(a ComponentAccessor) any { return a.ConfigUpdateStrategy() },
		"StatefulSetUpdateStrategy": func(a ComponentAccessor) any { return a.StatefulSetUpdateStrategy() },
		"PodManagementPolicy":       func(a ComponentAccessor) any { return a.PodManagementPolicy() },
		"TopologySpreadConstraints": func(a ComponentAccessor) any { return a.TopologySpreadConstraints() },
		"SuspendAction":             func(a ComponentAccessor) any { return a.SuspendAction() },
		"TerminationGracePeriod":    func(a ComponentAccessor) any { return a.TerminationGracePeriodSeconds() },
		"Env":                       func(a ComponentAccessor) any { return a.Env() },
		"EnvFrom":                   func(a ComponentAccessor) any { return a.EnvFrom() },
		"InitContainers":            func(a ComponentAccessor) any { return a.InitContainers() },
		"AdditionalContainers":      func(a ComponentAccessor) any { return a.AdditionalContainers() },
		"AdditionalVolumes":         func(a ComponentAccessor) any { return a.AdditionalVolumes() },
		"AdditionalVolumeMounts":    func(a ComponentAccessor) any { return a.AdditionalVolumeMounts() },
	}
	cl, both := clusterOnly(), bothLevels()
	clusterWant := map[string]any{
		"Version": "v8.5.0", "Image": "pingcap/tikv:v8.5.0", "ImagePullPolicy": corev1.PullAlways,
		"ImagePullSecrets": cl.Spec.ImagePullSecrets, "ServiceAccount": "cluster-sa", "HostNetwork": true,
		"Affinity": clusterAffinity, "PriorityClassName": "cluster-pc", "SchedulerName": "cluster-sched",
		"NodeSelector": map[string]string{"a": "cluster", "b": "cluster"}, "Labels": map[string]string{"l": "cluster"},
		"Annotations": map[string]string{"x": "cluster"}, "Tolerations": clusterTols,
		"PodSecurityContext": cl.Spec.PodSecurityContext, "DNSConfig": cl.Spec.DNSConfig,
		"DNSPolicy": corev1.DNSClusterFirstWithHostNet, "ConfigUpdateStrategy": v1alpha1.ConfigUpdateStrategyRollingUpdate,
		"StatefulSetUpdateStrategy": appsv1.OnDeleteStatefulSetStrategyType, "PodManagementPolicy": appsv1.OrderedReadyPodManagement,
		"TopologySpreadConstraints": cl.Spec.TopologySpreadConstraints, "SuspendAction": cl.Spec.SuspendAction,
		"TerminationGracePeriod": (*int64)(nil), "Env": []corev1.EnvVar(nil), "EnvFrom": []corev1.EnvFromSource(nil),
		"InitContainers": []corev1.Container(nil), "AdditionalContainers": []corev1.Container(nil),
		"AdditionalVolumes": []corev1.Volume(nil), "AdditionalVolumeMounts": []corev1.VolumeMount(nil),
	}
	kv := &both.Spec.TiKV.ComponentSpec
	componentWant := map[string]any{
		"Version": "v7.5.0", "Image": "reg/tikv:v7.5.0", "ImagePullPolicy": corev1.PullNever,
		"ImagePullSecrets": kv.ImagePullSecrets, "ServiceAccount": "tikv-sa", "HostNetwork": false,
		"Affinity": componentAffinity, "PriorityClassName": "tikv-pc", "SchedulerName": "tikv-sched",
		"NodeSelector": map[string]string{"a": "cluster", "b": "tikv", "c": "tikv"},
		"Labels":       map[string]string{"l": "cluster", "m": "tikv"}, "Annotations": map[string]string{"x": "tikv"},
		"Tolerations": componentTols, "PodSecurityContext": kv.PodSecurityContext, "DNSConfig": kv.DNSConfig,
		"DNSPolicy": corev1.DNSDefault, "ConfigUpdateStrategy": v1alpha1.ConfigUpdateStrategyInPlace,
		"StatefulSetUpdateStrategy": appsv1.RollingUpdateStatefulSetStrategyType, "PodManagementPolicy": appsv1.ParallelPodManagement,
		"TopologySpreadConstraints": kv.TopologySpreadConstraints, "SuspendAction": kv.SuspendAction,
		"TerminationGracePeriod": kv.TerminationGracePeriodSeconds, "Env": kv.Env, "EnvFrom": kv.EnvFrom,
		"InitContainers": kv.InitContainers, "AdditionalContainers": kv.AdditionalContainers,
		"AdditionalVolumes": kv.AdditionalVolumes, "AdditionalVolumeMounts": kv.AdditionalVolumeMounts,
	}
	var cases []accessorCase
	for name, g := range get {
		cases = append(cases,
			accessorCase{name: "cluster level/" + name, tc: cl, comp: ComponentTiKV, get: g, want: clusterWant[name]},
			accessorCase{name: "component wins/" + name, tc: both, comp: ComponentTiKV, get: g, want: componentWant[name]},
		)
	}
	runAccessorCases(t, cases)
}

func TestComponentAccessorDefaults(t *testing.T) {
	t.Parallel()
	empty := &v1alpha1.TidbCluster{}
	hostNet := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{ComponentSpec: v1alpha1.ComponentSpec{HostNetwork: ptr(true)}}}}
	weirdPolicy := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PodManagementPolicy: "Sequential"}}
	cases := []accessorCase{
		{name: "image of absent component", tc: empty, comp: ComponentTiDB, get: func(a ComponentAccessor) any { return a.Image() }, want: "pingcap/tidb"},
		{name: "image with nil cluster", tc: nil, comp: ComponentPump, get: func(a ComponentAccessor) any { return a.Image() }, want: "pingcap/tidb-binlog"},
		{name: "discovery image is the operator's", tc: empty, comp: ComponentDiscovery, get: func(a ComponentAccessor) any { return a.Image() }, want: ""},
		{name: "unknown component", tc: empty, comp: "dm", get: func(a ComponentAccessor) any { return a.Image() + "|" + string(a.Component()) }, want: "|dm"},
		{name: "pull policy", tc: empty, comp: ComponentPD, get: func(a ComponentAccessor) any { return a.ImagePullPolicy() }, want: corev1.PullIfNotPresent},
		{name: "dns policy", tc: empty, comp: ComponentPD, get: func(a ComponentAccessor) any { return a.DNSPolicy() }, want: corev1.DNSClusterFirst},
		{name: "dns policy on host network", tc: hostNet, comp: ComponentPD, get: func(a ComponentAccessor) any { return a.DNSPolicy() }, want: corev1.DNSClusterFirstWithHostNet},
		{name: "config update strategy", tc: empty, comp: ComponentTiKV, get: func(a ComponentAccessor) any { return a.ConfigUpdateStrategy() }, want: v1alpha1.ConfigUpdateStrategyInPlace},
		{name: "statefulset strategy", tc: empty, comp: ComponentTiKV, get: func(a ComponentAccessor) any { return a.StatefulSetUpdateStrategy() }, want: appsv1.RollingUpdateStatefulSetStrategyType},
		{name: "pod management", tc: empty, comp: ComponentTiKV, get: func(a ComponentAccessor) any { return a.PodManagementPolicy() }, want: appsv1.ParallelPodManagement},
		{name: "unknown pod management is parallel", tc: weirdPolicy, comp: ComponentTiKV, get: func(a ComponentAccessor) any { return a.PodManagementPolicy() }, want: appsv1.ParallelPodManagement},
		{name: "maps nil when empty", tc: empty, comp: ComponentTiKV, get: func(a ComponentAccessor) any { return a.Labels() }, want: map[string]string(nil)},
		{name: "suspend nil", tc: empty, comp: ComponentTiCDC, get: func(a ComponentAccessor) any { return a.SuspendAction() }, want: (*v1alpha1.SuspendAction)(nil)},
		{name: "absent component does not exist", tc: empty, comp: ComponentTiFlash, get: func(a ComponentAccessor) any { return a.Exists() }, want: false},
		{name: "discovery exists", tc: empty, comp: ComponentDiscovery, get: func(a ComponentAccessor) any { return a.Exists() }, want: true},
		{name: "configured component exists", tc: hostNet, comp: ComponentPD, get: func(a ComponentAccessor) any { return a.Exists() }, want: true},
	}
	runAccessorCases(t, cases)
}

func TestComponentAccessorEveryComponent(t *testing.T) {
	t.Parallel()
	cs := v1alpha1.ComponentSpec{Labels: map[string]string{"own": "yes"}}
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{
		Version:   "v1",
		PD:        &v1alpha1.PDSpec{ComponentSpec: cs},
		TiKV:      &v1alpha1.TiKVSpec{ComponentSpec: cs},
		TiDB:      &v1alpha1.TiDBSpec{ComponentSpec: cs},
		TiFlash:   &v1alpha1.TiFlashSpec{ComponentSpec: cs},
		TiCDC:     &v1alpha1.TiCDCSpec{ComponentSpec: cs},
		Pump:      &v1alpha1.PumpSpec{ComponentSpec: cs},
		TiProxy:   &v1alpha1.TiProxySpec{ComponentSpec: cs},
		Discovery: v1alpha1.DiscoverySpec{ComponentSpec: v1alpha1.ComponentSpec{Labels: map[string]string{"own": "yes"}, Image: "op:v1"}},
	}}
	images := map[Component]string{
		ComponentPD: "pingcap/pd:v1", ComponentTiKV: "pingcap/tikv:v1", ComponentTiDB: "pingcap/tidb:v1",
		ComponentTiFlash: "pingcap/tiflash:v1", ComponentTiCDC: "pingcap/ticdc:v1", ComponentPump: "pingcap/tidb-binlog:v1",
		ComponentTiProxy: "pingcap/tiproxy:v1", ComponentDiscovery: "op:v1",
	}
	var cases []accessorCase
	for c, img := range images {
		cases = append(cases, accessorCase{
			name: string(c), tc: tc, comp: c,
			get:  func(a ComponentAccessor) any { return []any{a.Image(), a.Labels()["own"], a.Exists()} },
			want: []any{img, "yes", true},
		})
	}
	runAccessorCases(t, cases)
}

func TestComponentAccessorReturnsCopies(t *testing.T) {
	t.Parallel()
	tc := bothLevels()
	a := NewComponentAccessor(tc, ComponentTiKV)
	a.Tolerations()[0].Key = "changed"
	a.Affinity().PodAntiAffinity = nil
	a.Env()[0].Value = "changed"
	a.NodeSelector()["b"] = "changed"
	*a.TerminationGracePeriodSeconds() = 99
	if diff := cmp.Diff(bothLevels(), tc, cmpOpts); diff != "" {
		t.Errorf("modifying accessor results changed the cluster (-want +got):\n%s", diff)
	}
}

// TestComponentAccessorContainerSecurity: securityContext and
// automountServiceAccountToken are the component's own (v1.6 has no
// cluster-level ones), copies the caller may change, nil when unset.
func TestComponentAccessorContainerSecurity(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{
		TiKV: &v1alpha1.TiKVSpec{ComponentSpec: v1alpha1.ComponentSpec{
			SecurityContext:              &corev1.SecurityContext{RunAsUser: ptr(int64(1000))},
			AutomountServiceAccountToken: ptr(false),
		}},
		PD: &v1alpha1.PDSpec{},
	}}
	kv := NewComponentAccessor(tc, ComponentTiKV)
	if sc := kv.SecurityContext(); sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1000 {
		t.Errorf("tikv securityContext = %+v, want runAsUser 1000", sc)
	}
	if got := kv.AutomountServiceAccountToken(); got == nil || *got {
		t.Errorf("tikv automountServiceAccountToken = %v, want false", got)
	}
	*kv.SecurityContext().RunAsUser = 1
	*kv.AutomountServiceAccountToken() = true
	if *tc.Spec.TiKV.SecurityContext.RunAsUser != 1000 || *tc.Spec.TiKV.AutomountServiceAccountToken {
		t.Errorf("changing the accessor's results changed the cluster: %+v", tc.Spec.TiKV.ComponentSpec)
	}
	pd := NewComponentAccessor(tc, ComponentPD)
	if pd.SecurityContext() != nil || pd.AutomountServiceAccountToken() != nil {
		t.Errorf("pd sets neither, got %+v %v", pd.SecurityContext(), pd.AutomountServiceAccountToken())
	}
}

// TestComponentAccessorAllocatesNothing: a sync builds dozens of accessors,
// so building one, present or absent, must not allocate.
func TestComponentAccessorAllocatesNothing(t *testing.T) {
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{}}}
	var sink ComponentAccessor
	for _, c := range []struct {
		name string
		tc   *v1alpha1.TidbCluster
		comp Component
	}{{"present", tc, ComponentPD}, {"absent", tc, ComponentTiKV}, {"no cluster", nil, ComponentTiDB}} {
		if n := testing.AllocsPerRun(100, func() { sink = NewComponentAccessor(c.tc, c.comp) }); n != 0 {
			t.Errorf("%s: %v allocations per accessor", c.name, n)
		}
		if c.comp != ComponentPD && (sink.Exists() || sink.Image() == "") {
			t.Errorf("%s: exists=%v image=%q, want an absent component with the default image", c.name, sink.Exists(), sink.Image())
		}
	}
}
