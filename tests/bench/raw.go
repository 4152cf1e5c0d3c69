//go:build bench

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/yaml"
)

// RawResult is the physical limit: a plain client creating exactly the
// objects the operator creates, at full concurrency, without owner
// references (an owner reference to a TidbCluster that does not exist would
// make the garbage collector delete the object).
type RawResult struct {
	// Objects created in total (render output × N).
	Objects int `json:"objects"`
	// CreateSeconds is the time until every create was answered.
	CreateSeconds float64 `json:"createSeconds"`
	// ReadySeconds is the time until every StatefulSet and Deployment had
	// all its replicas Ready: pods scheduled, run by KWOK, PVCs bound.
	ReadySeconds float64 `json:"readySeconds"`
	// Load is the machine's load meanwhile.
	Load Load `json:"load"`
}

// gvrOf maps the kinds `tidb-controller-manager render` prints to resources.
var gvrOf = map[string]schema.GroupVersionResource{
	"ServiceAccount": {Version: "v1", Resource: "serviceaccounts"},
	"Service":        {Version: "v1", Resource: "services"},
	"ConfigMap":      {Version: "v1", Resource: "configmaps"},
	"Role":           {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":    {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"Deployment":     {Group: "apps", Version: "v1", Resource: "deployments"},
	"StatefulSet":    {Group: "apps", Version: "v1", Resource: "statefulsets"},
}

// renderObjects runs `tidb-controller-manager render` on the shape and
// returns the objects the operator creates for one cluster.
func renderObjects(ctx context.Context, operatorBin, shapeFile string) ([]*unstructured.Unstructured, error) {
	out, err := exec.CommandContext(ctx, operatorBin, "render", "-f", shapeFile).Output()
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", shapeFile, err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range bytes.Split(out, []byte("\n---")) {
		doc = bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("decode rendered object: %w", err)
		}
		if _, ok := gvrOf[u.GetKind()]; !ok {
			return nil, fmt.Errorf("rendered kind %s has no resource mapping", u.GetKind())
		}
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		objs = append(objs, u)
	}
	return objs, nil
}

// runRaw creates objs in every namespace with an unthrottled client and
// waits until all workloads are Ready.
func runRaw(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, namespaces []string) (RawResult, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return RawResult{}, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return RawResult{}, err
	}
	want := map[string]bool{}
	for _, ns := range namespaces {
		want[ns] = true
	}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = managedBy }))
	sets := factory.Apps().V1().StatefulSets().Informer()
	deps := factory.Apps().V1().Deployments().Informer()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	type job struct {
		ns  string
		obj *unstructured.Unstructured
	}
	var jobs []job
	for _, ns := range namespaces {
		for _, o := range objs {
			jobs = append(jobs, job{ns, o})
		}
	}
	start := time.Now()
	err = forEach(ctx, len(jobs), 128, func(ctx context.Context, i int) error {
		j := jobs[i]
		o := j.obj.DeepCopy()
		o.SetNamespace(j.ns)
		_, err := dyn.Resource(gvrOf[o.GetKind()]).Namespace(j.ns).Create(ctx, o, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create %s %s/%s: %w", o.GetKind(), j.ns, o.GetName(), err)
		}
		return nil
	})
	if err != nil {
		return RawResult{}, err
	}
	res := RawResult{Objects: len(jobs), CreateSeconds: seconds(time.Since(start))}
	perNS := 0
	for _, o := range objs {
		if o.GetKind() == "StatefulSet" || o.GetKind() == "Deployment" {
			perNS++
		}
	}
	err = poll(ctx, 100*time.Millisecond, 15*time.Minute, "raw workloads Ready", func(context.Context) (bool, error) {
		ready := 0
		for _, o := range sets.GetStore().List() {
			s := o.(*appsv1.StatefulSet)
			if want[s.Namespace] && s.Spec.Replicas != nil && s.Status.ReadyReplicas == *s.Spec.Replicas &&
				s.Status.ObservedGeneration >= s.Generation {
				ready++
			}
		}
		for _, o := range deps.GetStore().List() {
			d := o.(*appsv1.Deployment)
			if want[d.Namespace] && d.Spec.Replicas != nil && d.Status.AvailableReplicas == *d.Spec.Replicas &&
				d.Status.ObservedGeneration >= d.Generation {
				ready++
			}
		}
		return ready == perNS*len(namespaces), nil
	})
	res.ReadySeconds = seconds(time.Since(start))
	return res, err
}
