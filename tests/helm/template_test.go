//go:build integration

package helm

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// valueSets are the configurations lint and the API-server dry run cover.
var valueSets = map[string][]string{
	"default":        nil,
	"namespaced":     {"clusterScoped=false"},
	"serviceMonitor": {"serviceMonitor.enabled=true", "serviceMonitor.labels.release=prometheus"},
	"tuned": {"appendReleaseSuffix=true", "controllerManager.selector={team=a,tier!=test}",
		"controllerManager.workers=7", "controllerManager.gcBudget=48Mi", "controllerManager.kubeClientQPS=30", "controllerManager.kubeClientBurst=60",
		"controllerManager.replicas=2", "features={StableScheduling=true}", "discoveryImage=example.com/discovery:v1",
		"controllerManager.env[0].name=GODEBUG", "controllerManager.env[0].value=madvdontneed=1",
		"controllerManager.tolerations[0].operator=Exists", "controllerManager.podAnnotations.a=b"},
}

func setArgs(set []string) []string {
	var args []string
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return args
}

// TestChartLintIsClean runs `helm lint --strict` for every value set: no
// warning or error may remain.
func TestChartLintIsClean(t *testing.T) {
	for name, set := range valueSets {
		t.Run(name, func(t *testing.T) {
			out, _ := runHelm(t, append([]string{"lint", "--strict", chartDir()}, setArgs(set)...)...)
			if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") || strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ERROR]") {
				t.Errorf("helm lint is not clean:\n%s", out)
			}
		})
	}
}

// TestChartTemplateIsAcceptedByTheAPIServer renders every value set and
// applies the result with a server-side dry run and strict field validation
// (the ServiceMonitor kind needs the Prometheus Operator, so that one
// document is only decoded).
func TestChartTemplateIsAcceptedByTheAPIServer(t *testing.T) {
	env := framework.NewEnv(t)
	for name, set := range valueSets {
		t.Run(name, func(t *testing.T) {
			out, _ := runHelm(t, append([]string{"template", "kt-" + strings.ToLower(name), chartDir(), "--namespace", env.Namespace}, setArgs(set)...)...)
			var keep []string
			monitors := 0
			for _, doc := range strings.Split(out, "\n---") {
				if strings.Contains(doc, "kind: ServiceMonitor") {
					monitors++
					continue
				}
				keep = append(keep, doc)
			}
			if want := slices.Contains(set, "serviceMonitor.enabled=true"); want != (monitors == 1) {
				t.Errorf("ServiceMonitors rendered: %d, enabled: %t", monitors, want)
			}
			path := filepath.Join(t.TempDir(), "chart.yaml")
			if err := os.WriteFile(path, []byte(strings.Join(keep, "\n---")), 0o600); err != nil {
				t.Fatal(err)
			}
			_, stderr, err := framework.KubectlErr("apply", "--dry-run=server", "--validate=strict", "-n", env.Namespace, "-f", path)
			if err != nil || strings.Contains(stderr, "Warning") {
				t.Errorf("API server dry run of the %s rendering: %v\n%s", name, err, stderr)
			}
		})
	}
}

// rendering is `helm template` output by kind.
type rendering struct{ objs []*unstructured.Unstructured }

func renderChart(t *testing.T, set ...string) rendering {
	t.Helper()
	out, _ := runHelm(t, append([]string{"template", "kt", chartDir(), "--namespace", "tidb-admin"}, setArgs(set)...)...)
	return rendering{objs: decodeManifests(t, out)}
}

func (r rendering) kinds() []string {
	var out []string
	for _, o := range r.objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// get decodes the one object of kind and name into into.
func (r rendering) get(t *testing.T, kind, name string, into any) {
	t.Helper()
	for _, o := range r.objs {
		if o.GetKind() == kind && o.GetName() == name {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			return
		}
	}
	t.Fatalf("%s %s not rendered; got %v", kind, name, r.kinds())
}

// TestChartRendersEachMode checks the objects and RBAC of both modes.
func TestChartRendersEachMode(t *testing.T) {
	t.Run("clusterScoped", func(t *testing.T) {
		r := renderChart(t)
		want := []string{"ClusterRole/kt:tidb-controller-manager", "ClusterRoleBinding/kt:tidb-controller-manager",
			"Deployment/tidb-controller-manager", "Role/kt:tidb-controller-manager-leader-election",
			"RoleBinding/kt:tidb-controller-manager-leader-election", "Service/tidb-controller-manager-metrics",
			"ServiceAccount/tidb-controller-manager"}
		if got := r.kinds(); !slices.Equal(got, want) {
			t.Errorf("objects = %v, want %v", got, want)
		}
		var cr rbacv1.ClusterRole
		r.get(t, "ClusterRole", "kt:tidb-controller-manager", &cr)
		if !grants(cr.Rules, "secrets", "watch") || grants(cr.Rules, "leases", "update") || !grants(cr.Rules, "secrets", "create") ||
			grants(cr.Rules, "secrets", "update") || grants(cr.Rules, "secrets", "delete") || !grants(cr.Rules, "configmaps", "delete") ||
			!grants(cr.Rules, "persistentvolumes", "watch") || !grants(cr.Rules, "persistentvolumes", "patch") ||
			!grants(cr.Rules, "backups/status", "patch") || !grants(cr.Rules, "restores/status", "patch") ||
			grants(cr.Rules, "backups", "update") || !grants(cr.Rules, "backupschedules/status", "patch") ||
			!grants(cr.Rules, "backups", "create") || !grants(cr.Rules, "backups", "delete") {
			t.Errorf("ClusterRole rules: %+v", cr.Rules)
		}
		checkMonitoringKindRules(t, "ClusterRole", cr.Rules)
		var le rbacv1.Role
		r.get(t, "Role", "kt:tidb-controller-manager-leader-election", &le)
		if len(le.Rules) != 1 || !grants(le.Rules, "leases", "update") || le.Namespace != "tidb-admin" {
			t.Errorf("leader-election Role: %+v", le)
		}
		var crb rbacv1.ClusterRoleBinding
		r.get(t, "ClusterRoleBinding", "kt:tidb-controller-manager", &crb)
		if len(crb.Subjects) != 1 || crb.Subjects[0].Namespace != "tidb-admin" || crb.Subjects[0].Name != serviceAccount {
			t.Errorf("ClusterRoleBinding subjects: %+v", crb.Subjects)
		}
		// Discovery and backup Jobs run the operator's own image, at its version.
		checkDeployment(t, r, "tidb-controller-manager", "-cluster-scoped=true",
			"-tidb-discovery-image=kubetidb/tidb-operator:v0.1.0", "-tidb-backup-manager-image=kubetidb/tidb-operator:v0.1.0")
	})
	t.Run("namespaced", func(t *testing.T) {
		r := renderChart(t, "clusterScoped=false")
		want := []string{"ClusterRole/kt:tidb-controller-manager", "ClusterRoleBinding/kt:tidb-controller-manager",
			"Deployment/tidb-controller-manager", "Role/kt:tidb-controller-manager",
			"RoleBinding/kt:tidb-controller-manager", "Service/tidb-controller-manager-metrics",
			"ServiceAccount/tidb-controller-manager"}
		if got := r.kinds(); !slices.Equal(got, want) {
			t.Errorf("objects = %v, want %v", got, want)
		}
		var role rbacv1.Role
		r.get(t, "Role", "kt:tidb-controller-manager", &role)
		for _, rv := range [][2]string{{"secrets", "list"}, {"secrets", "create"}, {"configmaps", "delete"}, {"leases", "create"},
			{"statefulsets", "update"}, {"tidbclusters/status", "patch"}, {"backups/status", "patch"}, {"restores/status", "patch"}} {
			if !grants(role.Rules, rv[0], rv[1]) {
				t.Errorf("namespaced Role lacks %s %s", rv[1], rv[0])
			}
		}
		checkMonitoringKindRules(t, "namespaced Role", role.Rules)
		if grants(role.Rules, "persistentvolumes", "patch") {
			t.Error("a namespaced Role cannot grant cluster-scoped PersistentVolumes")
		}
		// controllerManager.clusterPermissions (default on) in a ClusterRole of their own.
		var cr rbacv1.ClusterRole
		r.get(t, "ClusterRole", "kt:tidb-controller-manager", &cr)
		if len(cr.Rules) != 3 || !grants(cr.Rules, "nodes", "get") || !grants(cr.Rules, "persistentvolumes", "patch") ||
			!grants(cr.Rules, "storageclasses", "get") {
			t.Errorf("namespaced ClusterRole rules: %+v", cr.Rules)
		}
		checkDeployment(t, r, "tidb-controller-manager", "-cluster-scoped=false",
			"-cluster-permission-node=true", "-cluster-permission-pv=true", "-cluster-permission-sc=true")
	})
	t.Run("namespacedWithoutClusterPermissions", func(t *testing.T) {
		r := renderChart(t, "clusterScoped=false", "controllerManager.clusterPermissions.nodes=false",
			"controllerManager.clusterPermissions.persistentvolumes=false", "controllerManager.clusterPermissions.storageclasses=false")
		want := []string{"Deployment/tidb-controller-manager", "Role/kt:tidb-controller-manager",
			"RoleBinding/kt:tidb-controller-manager", "Service/tidb-controller-manager-metrics",
			"ServiceAccount/tidb-controller-manager"}
		if got := r.kinds(); !slices.Equal(got, want) {
			t.Errorf("objects = %v, want %v", got, want)
		}
		checkDeployment(t, r, "tidb-controller-manager", "-cluster-scoped=false",
			"-cluster-permission-node=false", "-cluster-permission-pv=false", "-cluster-permission-sc=false")
	})
	t.Run("namespacedNodesOnly", func(t *testing.T) {
		r := renderChart(t, "clusterScoped=false",
			"controllerManager.clusterPermissions.persistentvolumes=false", "controllerManager.clusterPermissions.storageclasses=false")
		var cr rbacv1.ClusterRole
		r.get(t, "ClusterRole", "kt:tidb-controller-manager", &cr)
		if len(cr.Rules) != 1 || !grants(cr.Rules, "nodes", "get") {
			t.Errorf("nodes-only ClusterRole rules: %+v", cr.Rules)
		}
		checkDeployment(t, r, "tidb-controller-manager", "-cluster-permission-node=true", "-cluster-permission-pv=false")
	})
	t.Run("rbacCreateFalse", func(t *testing.T) {
		r := renderChart(t, "rbac.create=false")
		if got := r.kinds(); !slices.Equal(got, []string{"Deployment/tidb-controller-manager", "Service/tidb-controller-manager-metrics"}) {
			t.Errorf("rbac.create=false renders %v", got)
		}
	})
	t.Run("tuned", func(t *testing.T) {
		r := renderChart(t, valueSets["tuned"]...)
		cmd := checkDeployment(t, r, "tidb-controller-manager-kt", "-cluster-scoped=true")
		for _, f := range []string{"-selector=team=a,tier!=test", "-workers=7", "-gc-budget=48Mi", "-kube-client-qps=30", "-kube-client-burst=60",
			"-features=StableScheduling=true", "-tidb-discovery-image=example.com/discovery:v1"} {
			if !slices.Contains(cmd, f) {
				t.Errorf("command lacks %s: %v", f, cmd)
			}
		}
		var sa corev1.ServiceAccount
		r.get(t, "ServiceAccount", serviceAccount+"-kt", &sa)
	})
}

// checkDeployment asserts what every rendering's Deployment must have and
// returns its command: flags the real binary accepts, the downward-API
// NAMESPACE, HELM_RELEASE, probes on the health port, a locked-down
// container, and the Recreate strategy (the old version stops before the
// new one starts).
func checkDeployment(t *testing.T, r rendering, name string, flags ...string) []string {
	t.Helper()
	var d appsv1.Deployment
	r.get(t, "Deployment", name, &d)
	c := d.Spec.Template.Spec.Containers[0]
	for _, f := range append(flags, "-leader-elect=true") {
		if !slices.Contains(c.Command, f) {
			t.Errorf("command %v lacks %s", c.Command, f)
		}
	}
	parseFlags(t, c.Command)
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if e := env["NAMESPACE"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("NAMESPACE env is not the pod's namespace: %+v", e)
	}
	if env["HELM_RELEASE"].Value != "kt" {
		t.Errorf("HELM_RELEASE = %+v", env["HELM_RELEASE"])
	}
	if e := env["MEMORY_LIMIT"]; e.ValueFrom == nil || e.ValueFrom.ResourceFieldRef == nil || e.ValueFrom.ResourceFieldRef.Resource != "limits.memory" {
		t.Errorf("MEMORY_LIMIT env is not the container's memory limit (the chart sets one by default): %+v", e)
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.String() != "health" {
		t.Errorf("liveness probe: %+v", p)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Port.String() != "health" {
		t.Errorf("readiness probe: %+v", p)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["metrics"] != 6060 || ports["health"] != 6061 {
		t.Errorf("container ports: %v", ports)
	}
	sc := c.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext: %+v", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resources: %+v", c.Resources)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %q, want Recreate", d.Spec.Strategy.Type)
	}
	var svc corev1.Service
	r.get(t, "Service", name+"-metrics", &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 6060 || svc.Annotations["prometheus.io/scrape"] != "true" ||
		svc.Annotations["prometheus.io/port"] != "6060" || svc.Annotations["prometheus.io/path"] != "/metrics" {
		t.Errorf("metrics Service: ports %+v annotations %v", svc.Spec.Ports, svc.Annotations)
	}
	return c.Command
}

// parseFlags parses the command's flags with the real controller-manager
// flag set, so a chart flag the binary does not know (or a bad value) fails.
// klog's -v is checked apart: registering klog flags here would change this
// test process's logging.
func parseFlags(t *testing.T, command []string) {
	t.Helper()
	if len(command) == 0 || command[0] != "/usr/local/bin/tidb-controller-manager" {
		t.Fatalf("command %v does not run /usr/local/bin/tidb-controller-manager", command)
	}
	fs := flag.NewFlagSet("tidb-controller-manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := app.NewOptions()
	opts.AddFlags(fs)
	verbosity := fs.Int("v", 0, "klog verbosity")
	if err := fs.Parse(command[1:]); err != nil {
		t.Fatalf("the binary rejects the chart's flags %v: %v", command[1:], err)
	}
	if opts.Controller.Namespace == "" {
		opts.Controller.Namespace = "tidb-admin" // $NAMESPACE in the pod
	}
	if err := opts.Validate(); err != nil {
		t.Errorf("the chart's flags do not validate: %v", err)
	}
	if *verbosity != 2 {
		t.Errorf("-v = %d, want the chart's logLevel 2", *verbosity)
	}
}

// TestChartShipsTheCRDs checks that the chart installs the nine CRDs and
// that its crds/ are the generated manifests/crd/ files, byte for byte
// (hack/update-chart-crds.sh copies them; hack/verify-chart-crds.sh checks).
func TestChartShipsTheCRDs(t *testing.T) {
	out, _ := runHelm(t, "template", "kt", chartDir(), "--include-crds")
	var names []string
	for _, o := range decodeManifests(t, out) {
		if o.GetKind() == "CustomResourceDefinition" {
			names = append(names, o.GetName())
		}
	}
	slices.Sort(names)
	want := []string{"backups.pingcap.com", "backupschedules.pingcap.com", "compactbackups.pingcap.com", "dmclusters.pingcap.com", "restores.pingcap.com", "tidbclusters.pingcap.com",
		"tidbdashboards.pingcap.com", "tidbinitializers.pingcap.com", "tidbmonitors.pingcap.com", "tidbngmonitorings.pingcap.com"}
	if !slices.Equal(names, want) {
		t.Errorf("helm template --include-crds renders CRDs %v, want %v", names, want)
	}
	generated, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "manifests", "crd", "*.yaml"))
	if err != nil || len(generated) != len(want) {
		t.Fatalf("manifests/crd: %v %v", generated, err)
	}
	for _, g := range generated {
		a, errA := os.ReadFile(g)
		b, errB := os.ReadFile(filepath.Join(chartDir(), "crds", filepath.Base(g)))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("charts/tidb-operator/crds/%s differs from manifests/crd (run hack/update-chart-crds.sh): %v %v",
				filepath.Base(g), errA, errB)
		}
	}
}

// monitoringKinds are the resources of TidbInitializer, TidbMonitor,
// TidbDashboard and TidbNGMonitoring.
var monitoringKinds = []string{"tidbinitializers", "tidbmonitors", "tidbdashboards", "tidbngmonitorings"}

// checkMonitoringKindRules fails unless rules grant, for each monitoring
// kind, what they grant tidbclusters' controller (get, list, watch, status
// update and patch, finalizers update) plus update and patch of the object,
// and no create or delete of it (the user's object).
func checkMonitoringKindRules(t *testing.T, what string, rules []rbacv1.PolicyRule) {
	t.Helper()
	for _, kind := range monitoringKinds {
		for _, verb := range []string{"list", "watch"} {
			if !grants(rules, kind, verb) {
				t.Errorf("%s lacks %s %s", what, verb, kind)
			}
		}
		status := "patch" // TidbDashboard, TidbNGMonitoring: a UID-guarded JSON patch
		if kind == "tidbinitializers" || kind == "tidbmonitors" {
			status = "update" // guarded by resourceVersion
		}
		if !grants(rules, kind+"/status", status) {
			t.Errorf("%s lacks %s %s/status", what, status, kind)
		}
		if !grants(rules, kind+"/finalizers", "update") {
			t.Errorf("%s lacks update %s/finalizers", what, kind)
		}
		for _, verb := range []string{"create", "delete", "update", "patch"} {
			if grants(rules, kind, verb) {
				t.Errorf("%s may %s %s, the user's objects", what, verb, kind)
			}
		}
	}
}
