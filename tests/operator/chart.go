package operator

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// ChartServiceAccount is the ServiceAccount the chart runs the operator as.
const ChartServiceAccount = "tidb-controller-manager"

// Chart says how the chart is rendered for a test operator: the values a
// user would --set (e.g. "controllerManager.clusterPermissions.nodes=false").
// clusterScoped and the release namespace come from the operator's options.
type Chart struct {
	Set []string
	// Namespaced renders clusterScoped=false whatever EnvRBAC says (a test
	// of namespaced mode itself).
	Namespaced bool
}

// ChartRelease is what ChartCredentials installed for one operator.
type ChartRelease struct {
	// Name is the release name; the chart's (Cluster)Roles are
	// "<Name>:tidb-controller-manager".
	Name, Namespace string
	// Kubeconfig authenticates as the chart's ServiceAccount.
	Kubeconfig string
	// Args are the controller-manager's arguments in the chart's Deployment.
	Args []string
}

// ChartCredentials renders charts/tidb-operator with helm for a release in
// namespace (clusterScoped as given, plus chart.Set), applies the RBAC
// objects it renders through adminKubeconfig (ServiceAccount, Roles,
// ClusterRoles and their bindings: created, or updated when they exist),
// mints a one-hour token for the ServiceAccount and writes a kubeconfig for
// it, so the operator runs with exactly what the chart grants, once the
// authorizer allows it. The cluster-wide objects are owned by the
// namespace and go with it. It fails the test on any error.
func ChartCredentials(t testing.TB, adminKubeconfig, namespace string, clusterScoped bool, chart Chart) *ChartRelease {
	t.Helper()
	rel := &ChartRelease{Name: "kubetidb-" + namespace[strings.LastIndex(namespace, "-")+1:], Namespace: namespace}
	manifest := renderChart(t, rel, clusterScoped, chart.Set)
	cfg, err := clientcmd.BuildConfigFromFlags("", adminKubeconfig)
	if err != nil {
		t.Fatalf("admin kubeconfig %s: %v", adminKubeconfig, err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace %s: %v", namespace, err)
	}
	// The cluster-wide objects belong to the test's namespace: they go
	// with it, after the operator (whose last events may still be on their
	// way) has stopped.
	owner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name, UID: ns.UID}}
	for _, doc := range strings.Split(manifest, "\n---") {
		applyChartObject(ctx, t, kube, rel, doc, owner)
	}
	waitGranted(ctx, t, kube, namespace)
	rel.Kubeconfig = ServiceAccountKubeconfig(ctx, t, cfg, kube, namespace)
	return rel
}

// applyChartObject applies one rendered document: the RBAC kinds are
// written, the Deployment's arguments kept, everything else skipped.
func applyChartObject(ctx context.Context, t testing.TB, kube kubernetes.Interface, rel *ChartRelease, doc string,
	owner []metav1.OwnerReference) {
	t.Helper()
	var head metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		t.Fatalf("rendered chart: %v\n%s", err, doc)
	}
	rbac := kube.RbacV1()
	switch head.Kind {
	case "ServiceAccount":
		upsert(ctx, t, doc, &corev1.ServiceAccount{}, kube.CoreV1().ServiceAccounts(rel.Namespace), nil)
	case "Role":
		upsert(ctx, t, doc, &rbacv1.Role{}, rbac.Roles(rel.Namespace), nil)
	case "RoleBinding":
		upsert(ctx, t, doc, &rbacv1.RoleBinding{}, rbac.RoleBindings(rel.Namespace), nil)
	case "ClusterRole":
		upsert(ctx, t, doc, &rbacv1.ClusterRole{}, rbac.ClusterRoles(), owner)
	case "ClusterRoleBinding":
		upsert(ctx, t, doc, &rbacv1.ClusterRoleBinding{}, rbac.ClusterRoleBindings(), owner)
	case "Deployment":
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("rendered Deployment: %v", err)
		}
		rel.Args = d.Spec.Template.Spec.Containers[0].Command[1:]
	}
}

// object is what upsert needs of a typed RBAC or ServiceAccount client.
type object interface{ metav1.Object }

// upserter is a typed client's create and update.
type upserter[T object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// upsert decodes doc into obj, gives it owner, and creates it, or updates
// it when it exists (a second operator of the same test namespace).
func upsert[T object](ctx context.Context, t testing.TB, doc string, obj T, c upserter[T], owner []metav1.OwnerReference) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(doc), obj); err != nil {
		t.Fatalf("rendered chart object: %v\n%s", err, doc)
	}
	obj.SetOwnerReferences(owner)
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("apply the chart's %T %s: %v", obj, obj.GetName(), err)
	}
}

// waitGranted waits until the API server's authorizer lets the chart's
// ServiceAccount update its Lease and watch TidbClusters in namespace: RBAC
// reaches the authorizer through a watch, so the first request of an
// operator started at once could otherwise be refused.
func waitGranted(ctx context.Context, t testing.TB, kube kubernetes.Interface, namespace string) {
	t.Helper()
	user := "system:serviceaccount:" + namespace + ":" + ChartServiceAccount
	for _, attr := range []authorizationv1.ResourceAttributes{
		{Namespace: namespace, Verb: "update", Group: "coordination.k8s.io", Resource: "leases"},
		{Namespace: namespace, Verb: "watch", Group: "pingcap.com", Resource: "tidbclusters"},
	} {
		framework.WaitFor(t, ctx, 30*time.Second, user+" may "+attr.Verb+" "+attr.Resource, func(ctx context.Context) (bool, error) {
			sar, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &attr,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}},
			}, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			framework.Observef(ctx, "%+v", sar.Status)
			return sar.Status.Allowed, nil
		})
	}
}

// renderChart runs `helm template` for rel's RBAC and Deployment.
func renderChart(t testing.TB, rel *ChartRelease, clusterScoped bool, set []string) string {
	t.Helper()
	args := []string{"template", rel.Name, filepath.Join(framework.RepoRoot(), "charts", "tidb-operator"),
		"--namespace", rel.Namespace, "--set", fmt.Sprintf("clusterScoped=%t", clusterScoped),
		"--show-only", "templates/controller-manager-rbac.yaml",
		"--show-only", "templates/controller-manager-deployment.yaml"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := HelmCommand(context.Background(), t, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out.String()
}

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// HelmBinary returns the cached helm, building it with
// `hack/local-cluster.sh build-helm` (about a minute, once) when missing.
func HelmBinary(t testing.TB) string {
	t.Helper()
	helmOnce.Do(func() {
		helmPath = framework.BinPath("helm")
		if _, err := os.Stat(helmPath); err == nil {
			return
		}
		cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "local-cluster.sh"), "build-helm")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if helmErr = cmd.Run(); helmErr != nil {
			helmErr = fmt.Errorf("%w\n%s", helmErr, out.String())
			return
		}
		_, helmErr = os.Stat(helmPath)
	})
	if helmErr != nil {
		t.Fatalf("building helm with hack/local-cluster.sh build-helm: %v", helmErr)
	}
	return helmPath
}

// HelmCommand is the cached helm (HelmBinary) with args and private
// config, cache and data dirs, so nothing of the user's helm setup is read.
func HelmCommand(ctx context.Context, t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, HelmBinary(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "HELM_CONFIG_HOME=" + filepath.Join(home, "config"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
	return cmd
}

// ServiceAccountKubeconfig writes a kubeconfig that authenticates as the
// chart's ServiceAccount in namespace with a TokenRequest token (1h),
// trusting the admin config's CA, and returns its path. It fails the test
// when the token cannot be had.
func ServiceAccountKubeconfig(ctx context.Context, t testing.TB, admin *rest.Config, kube kubernetes.Interface, namespace string) string {
	t.Helper()
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, ChartServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", namespace, ChartServiceAccount, err)
	}
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: ca, InsecureSkipTLSVerify: admin.Insecure}
	cfg.AuthInfos["chart"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["chart"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "chart", Namespace: namespace}
	cfg.CurrentContext = "chart"
	path := filepath.Join(t.TempDir(), "chart-sa.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// ApplyChartFlags sets on opts the flags of the chart's Deployment that say
// what the chart granted (SetChartFlags), failing the test on an error.
func ApplyChartFlags(t testing.TB, opts *app.Options, args []string) {
	t.Helper()
	if err := SetChartFlags(opts, args); err != nil {
		t.Fatal(err)
	}
}

// SetChartFlags sets on opts the flags of the chart's Deployment (args)
// that say what the chart granted, the --cluster-permission-* flags, so the
// operator reads only what its RBAC allows, as in a Helm install; the
// test's own settings (addresses, periods, images) are kept. It fails when
// args do not parse, or are namespaced while opts run cluster-scoped (a
// namespaced operator may run with cluster-scoped credentials: EnvRBAC).
func SetChartFlags(opts *app.Options, args []string) error {
	chart := app.NewOptions()
	fs := flag.NewFlagSet("chart", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	chart.AddFlags(fs)
	fs.Int("v", 0, "klog verbosity (the chart's -v)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("the chart's controller-manager arguments %q: %w", args, err)
	}
	if opts.Controller.ClusterScoped && !chart.Controller.ClusterScoped {
		return fmt.Errorf("the test runs a cluster-scoped operator with the chart's namespaced RBAC")
	}
	opts.ClusterPermNode, opts.ClusterPermPV, opts.ClusterPermSC = chart.ClusterPermNode, chart.ClusterPermPV, chart.ClusterPermSC
	return nil
}
