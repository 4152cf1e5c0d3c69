//go:build integration

package backup

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/pkg/controller/backupschedule"
	"github.com/kubetidb/tidb-operator/pkg/controller/compactbackup"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// startClockedOperator runs, in the test process and against the test's
// API server, the operator's Backup, Restore, BackupSchedule and CompactBackup controllers
// (the real ones, on the real informers) over Dependencies whose Clock is
// clk, which the test moves. They watch only the test's namespace and stop
// at test cleanup. The TidbCluster controller does not run (the fixture's
// cluster is paused).
func startClockedOperator(t *testing.T, f *jobFixture, clk *clocktesting.FakeClock) {
	t.Helper()
	cfg := controller.DefaultCLIConfig()
	cfg.Namespace, cfg.ClusterScoped = f.env.Namespace, false
	cfg.ResyncDuration = 5 * time.Second
	cfg.ManagePersistentVolumes = false
	// The controllers authenticate as the chart's ServiceAccount (tests/operator).
	chart := operator.ChartCredentials(t, framework.KubeconfigPath(), f.env.Namespace, operator.ClusterScopedRBAC(), operator.Chart{})
	rc, err := clientcmd.BuildConfigFromFlags("", chart.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube, client := kubernetes.NewForConfigOrDie(rc), versioned.NewForConfigOrDie(rc)
	ctx, cancel := context.WithCancel(context.Background())
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	recorder := b.NewRecorder(scheme, corev1.EventSource{Component: "tidb-controller-manager"})
	deps := controller.NewDependencies(cfg, kube, client, recorder, nil)
	deps.Clock = clk
	bk, err := backup.NewBackupController(deps)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := backup.NewRestoreController(deps)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := backupschedule.NewController(deps)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := compactbackup.NewController(deps)
	if err != nil {
		t.Fatal(err)
	}
	deps.StartInformers(ctx.Done())
	if !deps.WaitForCacheSync(ctx.Done()) {
		cancel()
		t.Fatal("informer caches did not sync")
	}
	runners := []interface{ Run(context.Context, int) }{bk, rt, bs, cb}
	done := make(chan struct{}, len(runners))
	for _, r := range runners {
		go func() {
			r.Run(ctx, 2)
			done <- struct{}{}
		}()
	}
	t.Cleanup(func() {
		cancel()
		for range runners {
			<-done
		}
		b.Shutdown()
	})
}
