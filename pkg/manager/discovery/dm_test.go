package discovery

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

func basicDC() *v1alpha1.DMCluster {
	dc := &v1alpha1.DMCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "dc-uid"}}
	dc.Spec.Master.Replicas = 3
	return dc
}

// TestDMObjectsGolden pins the DMCluster discovery objects: a TLS cluster
// adds nothing (discovery reads the client Secret through the API), the
// liveness probe and pod fields come from spec.discovery and the cluster.
func TestDMObjectsGolden(t *testing.T) {
	t.Parallel()
	no, delay := false, int32(7)
	cases := map[string]func(*v1alpha1.DMCluster){
		"dm-default": func(*v1alpha1.DMCluster) {},
		"dm-tls-probe-token": func(dc *v1alpha1.DMCluster) {
			dc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
			dc.Spec.Timezone = "Asia/Shanghai"
			dc.Spec.ImagePullPolicy = corev1.PullAlways
			dc.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			dc.Spec.Discovery.AutomountServiceAccountToken = &no
			dc.Spec.Discovery.LivenessProbe = &v1alpha1.Probe{InitialDelaySeconds: &delay}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dc := basicDC()
			mutate(dc)
			var objs []any
			for _, o := range DMObjects(dc, "pingcap/tidb-operator:v1") {
				objs = append(objs, o)
			}
			golden.Assert(t, name, objs...)
		})
	}
}

// TestDMObjectsCatalogue checks the facts of spec dm.md §3.1 directly:
// names, labels (instance <dc>-dm), the Role's rules, ports and env.
func TestDMObjectsCatalogue(t *testing.T) {
	t.Parallel()
	dc := basicDC()
	objs := DMObjects(dc, "op:v1")
	want := map[string]string{"app.kubernetes.io/name": "dm-cluster", "app.kubernetes.io/instance": "basic-dm",
		"app.kubernetes.io/component": "discovery", "app.kubernetes.io/managed-by": "tidb-operator"}
	for _, o := range objs {
		if o.GetName() != "basic-dm-discovery" || o.GetNamespace() != "ns" {
			t.Errorf("%T named %s/%s", o, o.GetNamespace(), o.GetName())
		}
		for k, v := range want {
			if o.GetLabels()[k] != v {
				t.Errorf("%T label %s = %q, want %q", o, k, o.GetLabels()[k], v)
			}
		}
	}
	role := newDMRole(dc)
	if r := role.Rules[0]; r.Resources[0] != "dmclusters" || r.ResourceNames[0] != "basic" || r.Verbs[0] != "get" || len(r.Verbs) != 1 {
		t.Errorf("role rule 0 = %+v, want get dmclusters [basic]", r)
	}
	d := newDMDeployment(dc, "op:v1")
	if d.Spec.Template.Labels["app.kubernetes.io/instance"] != "basic-dm" || d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "dm-cluster" {
		t.Errorf("pod labels %v, selector %v", d.Spec.Template.Labels, d.Spec.Selector.MatchLabels)
	}
	env := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["TC_NAME"] != "basic" || env["TZ"] != "UTC" || len(env) != 3 {
		t.Errorf("env %v, want MY_POD_NAMESPACE, TZ=UTC, TC_NAME=basic", env)
	}
	if sel := newServiceFor(dmMeta(dc)).Spec.Selector; sel["app.kubernetes.io/instance"] != "basic-dm" {
		t.Errorf("service selector %v", sel)
	}
}

// dmSyncFixture is a DMManager over a fake API server whose objects the
// test copies into the applier's caches.
type dmSyncFixture struct {
	kube *fake.Clientset
	inf  informers.SharedInformerFactory
	mgr  *DMManager
}

func newDMSyncFixture() *dmSyncFixture {
	kube := fake.NewSimpleClientset()
	inf := informers.NewSharedInformerFactory(kube, 0)
	core, apps, rbac := inf.Core().V1(), inf.Apps().V1(), inf.Rbac().V1()
	w := apply.NewApplier(kube, record.NewFakeRecorder(100), apply.Caches{
		Services: core.Services().Lister(), Deployments: apps.Deployments().Lister(),
		ServiceAccounts: core.ServiceAccounts().Lister(), Roles: rbac.Roles().Lister(),
		RoleBindings: rbac.RoleBindings().Lister(),
	})
	return &dmSyncFixture{kube: kube, inf: inf, mgr: NewDM(&component.Env{Writer: w, DiscoveryImage: "op:v1"})}
}

// seed copies every object of the fake API into the caches.
func (f *dmSyncFixture) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	core, apps, rbac := f.inf.Core().V1(), f.inf.Apps().V1(), f.inf.Rbac().V1()
	add := func(inf cache.SharedIndexInformer, obj any) {
		if err := inf.GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	sas, _ := f.kube.CoreV1().ServiceAccounts("ns").List(ctx, metav1.ListOptions{})
	for i := range sas.Items {
		add(core.ServiceAccounts().Informer(), &sas.Items[i])
	}
	svcs, _ := f.kube.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		add(core.Services().Informer(), &svcs.Items[i])
	}
	deps, _ := f.kube.AppsV1().Deployments("ns").List(ctx, metav1.ListOptions{})
	for i := range deps.Items {
		add(apps.Deployments().Informer(), &deps.Items[i])
	}
	roles, _ := f.kube.RbacV1().Roles("ns").List(ctx, metav1.ListOptions{})
	for i := range roles.Items {
		add(rbac.Roles().Informer(), &roles.Items[i])
	}
	rbs, _ := f.kube.RbacV1().RoleBindings("ns").List(ctx, metav1.ListOptions{})
	for i := range rbs.Items {
		add(rbac.RoleBindings().Informer(), &rbs.Items[i])
	}
}

// TestDMSyncCreatesThenConverges: the first sync creates the five objects,
// owned by the DMCluster; once the caches hold them a second sync writes
// nothing; a changed spec updates only the Deployment.
func TestDMSyncCreatesThenConverges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newDMSyncFixture()
	dc := basicDC()
	if err := f.mgr.Sync(ctx, dc); err != nil {
		t.Fatal(err)
	}
	creates := map[string]bool{}
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "create" {
			creates[a.GetResource().Resource] = true
		}
	}
	for _, r := range []string{"serviceaccounts", "roles", "rolebindings", "services", "deployments"} {
		if !creates[r] {
			t.Errorf("no %s created; actions %v", r, f.kube.Actions())
		}
	}
	d, err := f.kube.AppsV1().Deployments("ns").Get(ctx, "basic-dm-discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(d); ref == nil || ref.Kind != "DMCluster" || ref.UID != "dc-uid" {
		t.Errorf("Deployment controller %+v, want the DMCluster", ref)
	}

	f.seed(t)
	f.kube.ClearActions()
	if err := f.mgr.Sync(ctx, dc); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.kube.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			t.Errorf("converged sync wrote: %s %s", v, a.GetResource().Resource)
		}
	}

	dc.Spec.Timezone = "Asia/Tokyo"
	f.kube.ClearActions()
	if err := f.mgr.Sync(ctx, dc); err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, a := range f.kube.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			writes = append(writes, v+" "+a.GetResource().Resource)
		}
	}
	if len(writes) != 1 || writes[0] != "update deployments" {
		t.Errorf("writes after a timezone change %v, want [update deployments]", writes)
	}
}
