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
	"k8s.io/client-go/tools/cache"
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

// rawEnv is what a replay needs: an unthrottled dynamic client and caches
// of the workloads it waits on, in the replay's namespaces.
type rawEnv struct {
	dyn   dynamic.Interface
	sets  cache.SharedIndexInformer
	deps  cache.SharedIndexInformer
	want  map[string]bool
	start func()
	stop  chan struct{}
}

// newRawEnv builds the replay's client and caches; start them with
// env.start once their handlers are added, and close env.stop when done.
func newRawEnv(cfg *rest.Config, namespaces []string) (*rawEnv, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	env := &rawEnv{dyn: dyn, want: map[string]bool{}, stop: make(chan struct{})}
	for _, ns := range namespaces {
		env.want[ns] = true
	}
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = managedBy }))
	env.sets = factory.Apps().V1().StatefulSets().Informer()
	env.deps = factory.Apps().V1().Deployments().Informer()
	env.start = func() {
		factory.Start(env.stop)
		factory.WaitForCacheSync(env.stop)
	}
	return env, nil
}

// create creates a copy of o in ns.
func (env *rawEnv) create(ctx context.Context, ns string, o *unstructured.Unstructured) error {
	o = o.DeepCopy()
	o.SetNamespace(ns)
	if _, err := env.dyn.Resource(gvrOf[o.GetKind()]).Namespace(ns).Create(ctx, o, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s %s/%s: %w", o.GetKind(), ns, o.GetName(), err)
	}
	return nil
}

// waitReady waits until every StatefulSet and Deployment of objs has all
// its replicas Ready in every namespace of the replay.
func (env *rawEnv) waitReady(ctx context.Context, objs []*unstructured.Unstructured) error {
	perNS := 0
	for _, o := range objs {
		if o.GetKind() == "StatefulSet" || o.GetKind() == "Deployment" {
			perNS++
		}
	}
	return poll(ctx, 100*time.Millisecond, 15*time.Minute, "raw workloads Ready", func(context.Context) (bool, error) {
		ready := 0
		for _, o := range env.sets.GetStore().List() {
			s := o.(*appsv1.StatefulSet)
			if env.want[s.Namespace] && s.Spec.Replicas != nil && s.Status.ReadyReplicas == *s.Spec.Replicas &&
				s.Status.ObservedGeneration >= s.Generation {
				ready++
			}
		}
		for _, o := range env.deps.GetStore().List() {
			d := o.(*appsv1.Deployment)
			if env.want[d.Namespace] && d.Spec.Replicas != nil && d.Status.AvailableReplicas == *d.Spec.Replicas &&
				d.Status.ObservedGeneration >= d.Generation {
				ready++
			}
		}
		return ready == perNS*len(env.want), nil
	})
}

// runRaw creates objs in every namespace with an unthrottled client, 128 in
// flight, all at once, and waits until all workloads are Ready.
func runRaw(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, namespaces []string) (RawResult, error) {
	env, err := newRawEnv(cfg, namespaces)
	if err != nil {
		return RawResult{}, err
	}
	defer close(env.stop)
	env.start()
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
		return env.create(ctx, jobs[i].ns, jobs[i].obj)
	})
	if err != nil {
		return RawResult{}, err
	}
	res := RawResult{Objects: len(jobs), CreateSeconds: seconds(time.Since(start))}
	err = env.waitReady(ctx, objs)
	res.ReadySeconds = seconds(time.Since(start))
	return res, err
}
