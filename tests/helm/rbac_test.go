//go:build integration

package helm

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const (
	readyTimeout   = 4 * time.Minute
	serviceAccount = "tidb-controller-manager"
	// selectorKey labels the TidbCluster a cluster-scoped test operator
	// handles, so it never touches clusters of concurrently running tests.
	selectorKey = "kubetidb.io/helm-test"
)

// TestClusterScopedChartRBACDrivesBasicToReady installs the chart
// cluster-scoped into one namespace and deploys examples/basic into another;
// the operator runs as the chart's ServiceAccount.
func TestClusterScopedChartRBACDrivesBasicToReady(t *testing.T) {
	t.Parallel()
	rel := framework.NewEnv(t)     // the release namespace (operator, Lease)
	cluster := framework.NewEnv(t) // where the TidbCluster lives
	release := releaseName(rel.Namespace)
	selector := selectorKey + "=" + rel.Namespace
	install(t, release, rel.Namespace, "controllerManager.selector={"+selector+"}")
	checkChartInstalled(t, rel, release)

	sa := "system:serviceaccount:" + rel.Namespace + ":" + serviceAccount
	ns := cluster.Namespace
	checkPermissions(t, sa, []permission{
		{"list", "tidbclusters.pingcap.com", "", true},
		{"watch", "statefulsets.apps", "", true},
		{"patch", "tidbclusters.pingcap.com#status", ns, true},
		{"patch", "tidbclusters.pingcap.com", ns, true}, // smooth-upgrade annotations
		{"patch", "backups.pingcap.com#status", ns, true},
		{"patch", "restores.pingcap.com#status", ns, true},
		{"list", "tidbmonitors.pingcap.com", "", true},
		{"patch", "tidbinitializers.pingcap.com#status", ns, false},
		{"update", "tidbinitializers.pingcap.com#status", ns, true}, // mirrors its Job
		{"create", "jobs.batch", ns, true},                          // backup, restore and initializer Jobs
		{"update", "tidbdashboards.pingcap.com#finalizers", ns, true},
		{"patch", "tidbngmonitorings.pingcap.com#status", ns, true},
		{"patch", "tidbngmonitorings.pingcap.com", ns, false}, // never the user's spec or metadata
		{"delete", "tidbmonitors.pingcap.com", ns, false},
		{"create", "statefulsets.apps", ns, true},
		{"delete", "statefulsets.apps", ns, true}, // suspendAction
		{"update", "deployments.apps", ns, true},
		{"create", "roles.rbac.authorization.k8s.io", ns, true},
		{"watch", "endpoints", ns, true}, // granted on to each TidbMonitor's Prometheus
		{"patch", "pods", ns, true},
		{"delete", "pods", ns, true},
		{"delete", "persistentvolumeclaims", ns, true},
		{"get", "secrets/basic-cluster-client-secret", ns, true},
		{"create", "events", ns, true},
		{"update", "leases.coordination.k8s.io", rel.Namespace, true},
		{"create", "secrets", ns, true},    // tidb.initializer.createPassword's <tc>-init
		{"delete", "configmaps", ns, true}, // a taken-over cluster's v1 ConfigMap, once unused
		{"list", "events", ns, true},       // why a StatefulSet has not created a pod
		// Least privilege: the Lease only in the release namespace; Secrets
		// created only, never changed; no deletes of Deployments, no cluster objects.
		{"create", "leases.coordination.k8s.io", ns, false},
		{"update", "secrets", ns, false},
		{"delete", "secrets", ns, false},
		{"update", "backups.pingcap.com", ns, false},       // status only, never the user's spec
		{"get", "nodes", "", true},                         // topology labels
		{"get", "storageclasses.storage.k8s.io", "", true}, // volume expansion
		{"list", "nodes", "", false},
		{"delete", "deployments.apps", ns, false},
		{"escalate", "roles.rbac.authorization.k8s.io", ns, false},
	})

	kubeconfig := serviceAccountKubeconfig(t, rel, rel.Namespace, serviceAccount)
	startSimulator(t, rel)
	operator.StartManagerWith(t, rel.Namespace, nil, func(o *app.Options) {
		o.Kubeconfig = kubeconfig
		o.Controller.ClusterScoped = true
		o.Controller.Selector = selector
		o.LeaderElectionID = "tidb-controller-manager-" + release // as the chart's HELM_RELEASE makes it
		o.Controller.PDFailoverPeriod = time.Second               // for exerciseLifecycle
		operator.ApplyChartFlags(t, o, installedArgs(t, rel))
	})
	framework.ApplyYAMLFile(t, cluster.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), ns)
	framework.Kubectl(t, "-n", ns, "label", "tc", "basic", selector)
	waitBasicReady(t, cluster)
	checkOperatorWrites(t, cluster, rel.Namespace, "tidb-controller-manager-"+release)
	exerciseLifecycle(t, cluster)
}

// TestNamespacedChartRBACDrivesBasicToReady installs the chart with
// clusterScoped=false: a Role and RoleBinding in the release namespace only,
// an operator watching only that namespace, and the cluster in it.
func TestNamespacedChartRBACDrivesBasicToReady(t *testing.T) {
	t.Parallel()
	env := framework.NewEnv(t)
	ns := env.Namespace
	release := releaseName(ns)
	install(t, release, ns, "clusterScoped=false")
	checkChartInstalled(t, env, release)
	// controllerManager.clusterPermissions (all on by default, as in the
	// TiDB Operator's chart) are the only cluster-wide rules.
	cr, err := env.Kube.RbacV1().ClusterRoles().Get(env.Ctx, release+":tidb-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the clusterPermissions ClusterRole: %v", err)
	}
	var resources []string
	for _, r := range cr.Rules {
		resources = append(resources, r.Resources...)
	}
	slices.Sort(resources)
	if want := []string{"nodes", "persistentvolumes", "storageclasses"}; !slices.Equal(resources, want) {
		t.Errorf("the namespaced ClusterRole grants %v, want only %v", resources, want)
	}

	sa := "system:serviceaccount:" + ns + ":" + serviceAccount
	checkPermissions(t, sa, []permission{
		{"list", "tidbclusters.pingcap.com", ns, true},
		{"patch", "tidbclusters.pingcap.com#status", ns, true},
		{"patch", "tidbclusters.pingcap.com", ns, true}, // smooth-upgrade annotations
		{"patch", "backups.pingcap.com#status", ns, true},
		{"patch", "restores.pingcap.com#status", ns, true},
		{"watch", "tidbngmonitorings.pingcap.com", ns, true},
		{"update", "tidbmonitors.pingcap.com#status", ns, true},
		{"list", "tidbdashboards.pingcap.com", "", false},
		{"create", "statefulsets.apps", ns, true},
		{"create", "rolebindings.rbac.authorization.k8s.io", ns, true},
		{"list", "secrets", ns, true},
		{"patch", "pods", ns, true},
		{"delete", "pods", ns, true},
		{"delete", "persistentvolumeclaims", ns, true},
		{"create", "events", ns, true},
		{"create", "leases.coordination.k8s.io", ns, true},
		{"get", "nodes", "", true},                         // clusterPermissions.nodes
		{"patch", "persistentvolumes", "", true},           // clusterPermissions.persistentvolumes
		{"get", "storageclasses.storage.k8s.io", "", true}, // clusterPermissions.storageclasses
		{"list", "nodes", "", false},
		// Nothing else outside the release namespace, Secrets least of all.
		{"list", "secrets", "", false},
		{"get", "secrets", "default", false},
		{"list", "tidbclusters.pingcap.com", "", false},
		{"create", "statefulsets.apps", "default", false},
	})

	kubeconfig := serviceAccountKubeconfig(t, env, ns, serviceAccount)
	startSimulator(t, env)
	operator.StartManagerWith(t, ns, nil, func(o *app.Options) {
		o.Kubeconfig = kubeconfig
		o.LeaderElectionID = "tidb-controller-manager-" + release
		o.Controller.PDFailoverPeriod = time.Second
		operator.ApplyChartFlags(t, o, installedArgs(t, env)) // the permission flags the install passes
	})
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), ns)
	waitBasicReady(t, env)
	checkOperatorWrites(t, env, ns, "tidb-controller-manager-"+release)
	exerciseLifecycle(t, env)
}

// checkChartInstalled asserts what `helm install --wait` left: the release
// deployed, the CRDs established, the Deployment available.
func checkChartInstalled(t *testing.T, env *framework.Env, release string) {
	t.Helper()
	status, _ := runHelm(t, "status", release, "--namespace", env.Namespace, "-o", "json")
	if !strings.Contains(status, `"status":"deployed"`) {
		t.Errorf("helm status of %s: %s", release, status)
	}
	for _, crd := range operator.CRDPlurals(t) {
		framework.WaitFor(t, env.Ctx, time.Minute, "CRD "+crd+".pingcap.com Established", func(ctx context.Context) (bool, error) {
			out, stderr, err := framework.KubectlErr("get", "crd", crd+".pingcap.com", "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`)
			framework.Observef(ctx, "Established=%q %s %v", out, stderr, err)
			return err == nil && out == "True", nil
		})
	}
	// helm --wait checks the ReplicaSet's ready pods; availableReplicas is written after that.
	framework.WaitFor(t, env.Ctx, time.Minute, "the chart's Deployment is available", func(ctx context.Context) (bool, error) {
		dep, err := env.Kube.AppsV1().Deployments(env.Namespace).Get(ctx, "tidb-controller-manager", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if sa := dep.Spec.Template.Spec.ServiceAccountName; sa != serviceAccount {
			t.Fatalf("Deployment runs as %q, want %q", sa, serviceAccount)
		}
		framework.Observef(ctx, "status %+v", dep.Status)
		return dep.Status.AvailableReplicas == 1, nil
	})
}

// waitBasicReady waits until basic is Ready at its current generation.
func waitBasicReady(t *testing.T, env *framework.Env) {
	t.Helper()
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.WaitFor(t, env.Ctx, readyTimeout, "basic is Ready", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		degraded := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterDegraded)
		framework.Observef(ctx, "ready=%+v degraded=%+v", ready, degraded)
		return ready != nil && ready.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation, nil
	})
}

// checkOperatorWrites asserts writes only the ServiceAccount's RBAC allowed:
// the discovery Role (which needs the operator to hold what it grants), the
// operator's events, and its Lease.
func checkOperatorWrites(t *testing.T, env *framework.Env, leaseNamespace, lease string) {
	t.Helper()
	role, err := env.Kube.RbacV1().Roles(env.Namespace).Get(env.Ctx, "basic-discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("discovery Role: %v", err)
	}
	if !grants(role.Rules, "secrets", "watch") {
		t.Errorf("discovery Role lacks secrets watch: %+v", role.Rules)
	}
	framework.WaitFor(t, env.Ctx, time.Minute, "events from tidb-controller-manager", func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "%d events", len(events.Items))
		return slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.Source.Component == "tidb-controller-manager" && e.Reason == "SuccessfulCreate"
		}), nil
	})
	l, err := env.Kube.CoordinationV1().Leases(leaseNamespace).Get(env.Ctx, lease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("leader-election Lease %s/%s: %v", leaseNamespace, lease, err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		t.Errorf("Lease %s has no holder", lease)
	}
}

// installedArgs returns the controller-manager's arguments in the installed
// chart's Deployment (after the binary's path).
func installedArgs(t *testing.T, env *framework.Env) []string {
	t.Helper()
	dep, err := env.Kube.AppsV1().Deployments(env.Namespace).Get(env.Ctx, "tidb-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's Deployment: %v", err)
	}
	return dep.Spec.Template.Spec.Containers[0].Command[1:]
}

func grants(rules []rbacv1.PolicyRule, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}
