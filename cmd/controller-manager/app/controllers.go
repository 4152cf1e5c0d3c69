package app

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/observe"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbcluster"
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
	pingcap := deps.InformerFactory.Pingcap().V1alpha1()
	bk, err := observe.New("backup", "Backup", pingcap.Backups().Informer(),
		func(ns, name string) (*v1alpha1.Backup, error) { return deps.BackupLister.Backups(ns).Get(name) }, deps)
	if err != nil {
		return nil, err
	}
	rt, err := observe.New("restore", "Restore", pingcap.Restores().Informer(),
		func(ns, name string) (*v1alpha1.Restore, error) { return deps.RestoreLister.Restores(ns).Get(name) }, deps)
	if err != nil {
		return nil, err
	}
	bks, err := observe.New("backupschedule", "BackupSchedule", pingcap.BackupSchedules().Informer(),
		func(ns, name string) (*v1alpha1.BackupSchedule, error) {
			return deps.BackupScheduleLister.BackupSchedules(ns).Get(name)
		}, deps)
	if err != nil {
		return nil, err
	}
	return []runner{tc, bk, rt, bks}, nil
}

// tidbClusterComponents lists the component managers in sync order.
func tidbClusterComponents(_ *controller.Dependencies) []tidbcluster.Component {
	return nil
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
