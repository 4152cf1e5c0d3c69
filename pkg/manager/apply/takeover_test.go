package apply

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// v1Template is a pod template as another operator wrote it: env in
// another order, fields the API server defaults filled in, its own
// annotation on the template.
func v1Template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/component": "pd"},
			Annotations: map[string]string{"prometheus.io/port": "2379", AnnV1LastApplied: "{}"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pd", Image: "pingcap/pd:v8.5.0",
				Env:                    []corev1.EnvVar{{Name: "NAMESPACE", Value: "ns"}, {Name: "SET_NAME", Value: "basic-pd"}, {Name: "TZ", Value: "UTC"}},
				VolumeMounts:           []corev1.VolumeMount{{Name: "config", MountPath: "/etc/pd"}, {Name: "annotations", MountPath: "/etc/podinfo"}},
				TerminationMessagePath: "/dev/termination-log", ImagePullPolicy: corev1.PullIfNotPresent,
				ReadinessProbe: &corev1.Probe{InitialDelaySeconds: 10, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}}},
			Volumes:       []corev1.Volume{{Name: "config"}, {Name: "annotations"}},
			RestartPolicy: corev1.RestartPolicyAlways, SchedulerName: "default-scheduler",
		},
	}
}

// ourTemplate is the same template as we build it.
func ourTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/component": "pd"},
			Annotations: map[string]string{"prometheus.io/port": "2379"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pd", Image: "pingcap/pd:v8.5.0",
				Env:            []corev1.EnvVar{{Name: "NAMESPACE", Value: "ns"}, {Name: "TZ", Value: "UTC"}, {Name: "SET_NAME", Value: "basic-pd"}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "annotations", MountPath: "/etc/podinfo"}, {Name: "config", MountPath: "/etc/pd"}},
				ReadinessProbe: &corev1.Probe{InitialDelaySeconds: 10}}},
			Volumes: []corev1.Volume{{Name: "annotations"}, {Name: "config"}},
		},
	}
}

func TestSameTemplateMeaning(t *testing.T) {
	t.Parallel()
	v1, ours := v1Template(), ourTemplate()
	if !SameTemplateMeaning(&v1, &ours, false) {
		t.Fatal("order, API defaults and the other operator's annotation must not count as a difference")
	}
	for name, change := range map[string]func(*corev1.PodTemplateSpec){
		"image":     func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "pingcap/pd:v8.5.1" },
		"env value": func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Env[1].Value = "Asia/Tokyo" },
		"env added": func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "X"})
		},
		"volume":     func(p *corev1.PodTemplateSpec) { p.Spec.Volumes = p.Spec.Volumes[:1] },
		"annotation": func(p *corev1.PodTemplateSpec) { p.Annotations["prometheus.io/port"] = "2380" },
		"probe":      func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].ReadinessProbe.PeriodSeconds = 5 },
		"container": func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "slowlog"})
		},
	} {
		changed := ourTemplate()
		change(&changed)
		if SameTemplateMeaning(&v1, &changed, false) {
			t.Errorf("%s changed: must count as a difference", name)
		}
	}
	img := ourTemplate()
	img.Spec.Containers[0].Image = "other"
	if !SameTemplateMeaning(&v1, &img, true) {
		t.Error("ignoreImages: an image difference must not count")
	}
}

// TestTakeoverKeepsAnEquivalentTemplateOnce takes over a StatefulSet the
// TiDB Operator v1 wrote: the first apply keeps its template, drops its
// last-applied annotation and records ours; the next apply writes
// nothing, a scale writes replicas but keeps the template (read whole from
// the API: the cache holds it stripped), and a real change writes our
// template and drops the mark.
func TestTakeoverKeepsAnEquivalentTemplateOnce(t *testing.T) {
	t.Parallel()
	a, kube, informers := newFakeApplier()
	ctx := context.Background()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	three := int32(3)
	v1 := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "basic-pd", Namespace: "ns",
			Annotations:     map[string]string{AnnV1LastApplied: `{"replicas":3}`, "team": "db"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, v1alpha1.SchemeGroupVersion.WithKind("TidbCluster"))}},
		Spec: appsv1.StatefulSetSpec{Replicas: &three, Template: v1Template()},
	}
	live, err := kube.AppsV1().StatefulSets("ns").Create(ctx, v1, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	indexer := informers.Apps().V1().StatefulSets().Informer().GetIndexer()
	desired := func(replicas int32, image string) *appsv1.StatefulSet {
		d := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd", Namespace: "ns"},
			Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Template: ourTemplate()}}
		d.Spec.Template.Spec.Containers[0].Image = image
		return d
	}
	step := func(d *appsv1.StatefulSet) *appsv1.StatefulSet {
		t.Helper()
		cached := live.DeepCopy() // as the informer caches it
		StripTemplate(&cached.Spec.Template)
		if err := indexer.Add(cached); err != nil {
			t.Fatal(err)
		}
		got, err := a.StatefulSet(ctx, owner, d)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	live = step(desired(3, "pingcap/pd:v8.5.0"))
	if _, ok := live.Annotations[AnnV1LastApplied]; ok || live.Annotations["team"] != "db" {
		t.Fatalf("annotations after takeover %v: v1's last-applied must go, foreign ones stay", live.Annotations)
	}
	if _, ok := live.Spec.Template.Annotations[AnnV1LastApplied]; !ok || live.Spec.Template.Spec.RestartPolicy == "" {
		t.Fatal("the equivalent v1 template must be kept as it was (a template change restarts pods)")
	}
	writes := len(kube.Actions())
	live = step(desired(3, "pingcap/pd:v8.5.0"))
	if n := len(kube.Actions()); n != writes {
		t.Fatalf("converged after takeover: %d more actions, want none", n-writes)
	}
	live = step(desired(4, "pingcap/pd:v8.5.0"))
	if *live.Spec.Replicas != 4 || live.Spec.Template.Spec.RestartPolicy == "" ||
		len(live.Spec.Template.Spec.Containers[0].Env) != 3 {
		t.Fatalf("a scale-out after takeover must keep the whole adopted template, got %+v", live.Spec.Template.Spec)
	}
	live = step(desired(4, "pingcap/pd:v8.5.1"))
	if live.Spec.Template.Spec.Containers[0].Image != "pingcap/pd:v8.5.1" || live.Spec.Template.Spec.RestartPolicy != "" {
		t.Fatal("a real change must write our template")
	}
	if _, ok := live.Annotations[AnnAdoptedTemplate]; ok {
		t.Fatal("the adoption mark must go with the real change")
	}
}

// podWith is a pod template of two init containers and two containers, an
// inline script reading $NAMESPACE, and a downward-API volume.
func podWith() corev1.PodTemplateSpec {
	ns := corev1.EnvVar{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}
	pod := corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "a"}, {Name: "user-init", Image: "b"}},
		Containers: []corev1.Container{
			{Name: "log", Image: "a", Command: []string{"sh", "-c", "tail -F /x"}},
			{Name: "main", Image: "m", Command: []string{"sh", "-c", "exec /server --ns=${NAMESPACE}"},
				Env:            []corev1.EnvVar{ns, pod, {Name: "TZ", Value: "UTC"}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "annotations", MountPath: "/etc/podinfo", ReadOnly: true}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}}},
		},
		Volumes: []corev1.Volume{{Name: "annotations", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}}},
	}}
}

func TestSameTemplateMeaningByNameAndWhatLiveOmits(t *testing.T) {
	t.Parallel()
	main := func(p *corev1.PodTemplateSpec) *corev1.Container { return &p.Spec.Containers[1] }
	for _, c := range []struct {
		name string
		live func(*corev1.PodTemplateSpec)
		want bool
	}{
		{"containers in another order", func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0], p.Spec.Containers[1] = p.Spec.Containers[1], p.Spec.Containers[0]
		}, true},
		{"init containers in another order", func(p *corev1.PodTemplateSpec) {
			p.Spec.InitContainers[0], p.Spec.InitContainers[1] = p.Spec.InitContainers[1], p.Spec.InitContainers[0]
		}, false},
		{"a container renamed", func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Name = "other" }, false},
		{"no downward-API volume", func(p *corev1.PodTemplateSpec) {
			p.Spec.Volumes, main(p).VolumeMounts = nil, nil
		}, true},
		{"no readiness probe", func(p *corev1.PodTemplateSpec) { main(p).ReadinessProbe = nil }, true},
		{"no TZ", func(p *corev1.PodTemplateSpec) { main(p).Env = main(p).Env[:2] }, true},
		{"another TZ", func(p *corev1.PodTemplateSpec) { main(p).Env[2].Value = "Asia/Tokyo" }, false},
		{"no POD_NAME, which no script reads", func(p *corev1.PodTemplateSpec) {
			main(p).Env = append(main(p).Env[:1:1], main(p).Env[2])
		}, true},
		{"no NAMESPACE, which the script reads", func(p *corev1.PodTemplateSpec) { main(p).Env = main(p).Env[1:] }, false},
		{"another inline script", func(p *corev1.PodTemplateSpec) {
			main(p).Command = []string{"sh", "-c", "exec /server --ns=default"}
		}, false},
	} {
		live, desired := podWith(), podWith()
		c.live(&live)
		if got := SameTemplateMeaning(&live, &desired, false); got != c.want {
			t.Errorf("%s: SameTemplateMeaning = %v, want %v", c.name, got, c.want)
		}
	}
}
