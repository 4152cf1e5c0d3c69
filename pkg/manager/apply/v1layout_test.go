package apply_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
	"github.com/kubetidb/tidb-operator/tests/v1layout"
)

// ourTemplates builds every component's pod template for tc (defaulted).
func ourTemplates(t *testing.T, tc *v1alpha1.TidbCluster) map[string]corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]corev1.PodTemplateSpec{}
	for _, m := range members.New(&component.Env{}) {
		r, ok := m.(interface {
			Desired(*v1alpha1.TidbCluster) ([]metav1.Object, error)
		})
		if !ok {
			continue
		}
		objs, err := r.Desired(tc)
		if err != nil {
			t.Fatalf("build %s: %v", m.Name(), err)
		}
		for _, o := range objs {
			if sts, ok := o.(*appsv1.StatefulSet); ok {
				out[m.Name()] = sts.Spec.Template
			}
		}
	}
	return out
}

func cluster(t *testing.T) *v1alpha1.TidbCluster {
	t.Helper()
	tc, err := v1layout.Cluster()
	if err != nil {
		t.Fatal(err)
	}
	tc.Namespace = "ns"
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

// TestV1TemplatesMeanOurs lays every StatefulSet component out as the TiDB
// Operator v1.6 does (TiFlash's tailers after tiflash with v1's commands
// and init script, TiCDC's one-line command, Pump's script without the
// annotations volume, TiProxy without probe and TZ) and checks that each
// means the same as ours.
func TestV1TemplatesMeanOurs(t *testing.T) {
	t.Parallel()
	tc := cluster(t)
	ours := ourTemplates(t, tc)
	for _, comp := range []string{"pd", "tikv", "tidb", "tiflash", "ticdc", "pump", "tiproxy"} {
		d, ok := ours[comp]
		if !ok {
			t.Fatalf("no StatefulSet built for %s", comp)
		}
		v1 := *d.DeepCopy()
		v1layout.PodTemplate(tc, comp, &v1, nil)
		if !apply.SameTemplateMeaning(&v1, &d, false) {
			t.Errorf("%s: v1.6's template must mean the same as ours", comp)
		}
	}
	if ours["tiflash"].Spec.Containers[0].Name == "tiflash" {
		t.Error("the test must cover a different container order: ours lists the tailers first")
	}
}

// TestV1TemplatesWithARealChangeDiffer changes one thing a pod runs in
// v1's template; each must count as a difference.
func TestV1TemplatesWithARealChangeDiffer(t *testing.T) {
	t.Parallel()
	tc := cluster(t)
	ours := ourTemplates(t, tc)
	for name, c := range map[string]struct {
		comp   string
		change func(*corev1.PodSpec)
	}{
		"tailer follows another file": {"tiflash", func(p *corev1.PodSpec) {
			p.Containers[1].Command[2] = "touch /data0/logs/x.log; tail -n0 -F /data0/logs/x.log;"
		}},
		"init renders one template": {"tiflash", func(p *corev1.PodSpec) {
			p.InitContainers[0].Command[2] = v1layout.TiFlashInitScript[:len(v1layout.TiFlashInitScript)/2]
		}},
		"a tailer less": {"tiflash", func(p *corev1.PodSpec) { p.Containers = p.Containers[:3] }},
		"TiCDC gc-ttl": {"ticdc", func(p *corev1.PodSpec) {
			p.Containers[0].Command[2] += " --gc-ttl=1"
		}},
		"Pump image": {"pump", func(p *corev1.PodSpec) { p.Containers[0].Image = "pingcap/tidb-binlog:v8.1.0" }},
		"Pump runs another program": {"pump", func(p *corev1.PodSpec) {
			p.Containers[0].Command[2] = "/drainer -L=info"
		}},
		"TiProxy with a probe of its own": {"tiproxy", func(p *corev1.PodSpec) {
			p.Containers[0].ReadinessProbe = &corev1.Probe{InitialDelaySeconds: 99}
		}},
		"TiProxy in another zone": {"tiproxy", func(p *corev1.PodSpec) {
			p.Containers[0].Env = append(p.Containers[0].Env, corev1.EnvVar{Name: "TZ", Value: "Asia/Tokyo"})
		}},
	} {
		d := ours[c.comp]
		v1 := *d.DeepCopy()
		v1layout.PodTemplate(tc, c.comp, &v1, nil)
		c.change(&v1.Spec)
		if apply.SameTemplateMeaning(&v1, &d, false) {
			t.Errorf("%s: must count as a difference", name)
		}
	}
}
