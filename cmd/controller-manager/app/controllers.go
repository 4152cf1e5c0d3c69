package app

import (
	"context"
	"crypto/tls"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbcluster"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/discovery"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/reclaim"
	"github.com/kubetidb/tidb-operator/pkg/manager/tidb"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

type recorderT = record.EventRecorder

// runner is a controller ready to run.
type runner interface {
	Run(ctx context.Context, workers int)
}

// newControllers builds one controller per CRD on deps.
func newControllers(deps *controller.Dependencies) ([]runner, error) {
	tc, err := tidbcluster.NewController(deps, tidbClusterComponents(deps))
	if err != nil {
		return nil, err
	}
	// Backup, Restore and BackupSchedule are validated and reported, not run yet.
	bk, err := backup.NewBackupController(deps)
	if err != nil {
		return nil, err
	}
	rt, err := backup.NewRestoreController(deps)
	if err != nil {
		return nil, err
	}
	bks, err := backup.NewBackupScheduleController(deps)
	if err != nil {
		return nil, err
	}
	return []runner{tc, bk, rt, bks}, nil
}

// tidbClusterComponents lists the steps of a cluster sync in order: PV
// reclaim policies, discovery, then PD, TiKV and TiDB (each waits on the one
// before), and last the cleaner of scaled-in members' PVCs.
func tidbClusterComponents(deps *controller.Dependencies) []tidbcluster.Component {
	applier := apply.NewApplier(deps)
	httpClients := pdapi.NewHTTPClientCache(secretTLS(deps))
	pdControl := pdapi.NewControlWithHTTPClients(httpClients, 0)
	tidbClient := tidbapi.NewClient(httpClients, 0)
	cfg := deps.CLIConfig
	reclaimPolicy, pvcCleaner := reclaim.New(deps)
	return []tidbcluster.Component{
		reclaimPolicy,
		discovery.NewManager(applier, deps.CLIConfig.TiDBDiscoveryImage),
		component.NewManager(pd.New(pdControl, deps.Clock), pd.NewHooks(failover(cfg.AutoFailover, cfg.PDFailoverPeriod), pdControl, deps.KubeClient, deps.Recorder, deps.Clock), applier, deps),
		component.NewManager(tikv.New(pdControl, deps.Clock),
			tikv.NewHooks(failover(cfg.AutoFailover, cfg.TiKVFailoverPeriod), pdControl, deps.KubeClient, deps.PodLister, deps.Recorder, deps.Clock),
			applier, deps),
		component.NewManager(tidb.New(tidbClient, deps.PodLister, deps.Clock),
			tidb.NewHooks(failover(cfg.AutoFailover, cfg.TiDBFailoverPeriod), deps.Recorder, deps.Clock), applier, deps),
		pvcCleaner,
	}
}

func failover(enabled bool, period time.Duration) component.FailoverConfig {
	return component.FailoverConfig{Enabled: enabled, Period: period}
}

// secretTLS loads a cluster's client certificate from its Secret. The
// Secret is read from the API (it is the user's, not labelled for the
// operator's caches) only when a client is built, which the PD control caches.
func secretTLS(deps *controller.Dependencies) pdapi.TLSConfigFunc {
	return func(namespace, tcName string) (*tls.Config, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := deps.KubeClient.CoreV1().Secrets(namespace).Get(ctx, pdapi.ClusterClientTLSSecretName(tcName), metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return pdapi.TLSConfigFromSecretData(s.Data)
	}
}

// newRecorder returns an event recorder that knows the pingcap.com kinds and
// writes events as tidb-controller-manager; stop flushes and stops it.
func newRecorder(ctx context.Context, kube kubernetes.Interface) (record.EventRecorder, func()) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	return b.NewRecorder(scheme, corev1.EventSource{Component: "tidb-controller-manager"}), b.Shutdown
}
