package framework

import (
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Labels put on every namespace the harness creates, so leftovers are easy to find and delete:
// kubectl delete ns -l kubetidb.io/e2e=true
const (
	LabelTest     = "kubetidb.io/e2e"
	LabelTestName = "kubetidb.io/e2e-test"
)

// Env is one test's slice of the cluster: a fresh namespace and clients for it.
type Env struct {
	// Ctx is cancelled when the test (and its subtests) finish.
	Ctx context.Context
	// Namespace is created for this Env and deleted at cleanup unless KUBETIDB_KEEP_NS=1.
	Namespace string
	// Config is the admin rest config (a private copy).
	Config *rest.Config
	// Kube is a typed clientset for Config.
	Kube kubernetes.Interface
	// Dynamic is a dynamic client for Config (CRDs, unstructured objects).
	Dynamic dynamic.Interface
}

// NewEnv creates clients and a fresh namespace named after the test, and waits until pods can be
// created in it (its default ServiceAccount exists). At cleanup it logs the namespace's pods and
// events if the test failed, deletes the namespace (without waiting for it to terminate) unless
// KUBETIDB_KEEP_NS=1, and cancels Ctx.
func NewEnv(t *testing.T) *Env {
	t.Helper()
	cfg := RestConfig()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating clientset: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating dynamic client: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	name := testNameLabel(t.Name())
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "e2e-" + truncate(name, 40) + "-",
			Labels:       map[string]string{LabelTest: "true", LabelTestName: name},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating test namespace: %v", err)
	}
	env := &Env{Ctx: ctx, Namespace: ns.Name, Config: cfg, Kube: kube, Dynamic: dyn}
	t.Cleanup(func() { env.cleanup(t) })

	WaitFor(t, ctx, time.Minute, "default ServiceAccount in namespace "+ns.Name, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return env
}

func (e *Env) cleanup(t *testing.T) {
	// A fresh context: e.Ctx may already be cancelled by a subtest's failure path.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if t.Failed() {
		e.dumpNamespace(ctx, t)
	}
	if os.Getenv(EnvKeepNamespaces) == "1" {
		t.Logf("keeping namespace %s (%s=1)", e.Namespace, EnvKeepNamespaces)
		return
	}
	err := e.Kube.CoreV1().Namespaces().Delete(ctx, e.Namespace, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting namespace %s: %v", e.Namespace, err)
	}
}

// dumpNamespace logs pods (phase, node) and the last events of the namespace, to explain a failure.
func (e *Env) dumpNamespace(ctx context.Context, t *testing.T) {
	pods, err := e.Kube.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("listing pods of %s for the failure dump: %v", e.Namespace, err)
	} else {
		for _, p := range pods.Items {
			t.Logf("pod %s/%s phase=%s node=%q deleting=%t", p.Namespace, p.Name, p.Status.Phase,
				p.Spec.NodeName, p.DeletionTimestamp != nil)
		}
	}
	events, err := e.Kube.CoreV1().Events(e.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("listing events of %s for the failure dump: %v", e.Namespace, err)
		return
	}
	items := events.Items
	sort.SliceStable(items, func(i, j int) bool { return eventTime(&items[i]).Before(eventTime(&items[j])) })
	if len(items) > 30 {
		items = items[len(items)-30:]
	}
	for _, ev := range items {
		t.Logf("event %s %s/%s %s: %s", ev.Type, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, ev.Message)
	}
}

// eventTime is when an event last happened: core/v1 Events written through events.k8s.io carry
// only EventTime, older writers only LastTimestamp.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	default:
		return ev.CreationTimestamp.Time
	}
}

var nonLabelChars = regexp.MustCompile(`[^a-z0-9-]+`)

// testNameLabel turns a test name into a valid label value and namespace-name fragment.
func testNameLabel(name string) string {
	s := nonLabelChars.ReplaceAllString(strings.ToLower(name), "-")
	return strings.Trim(truncate(s, 63), "-")
}

func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-")
}
