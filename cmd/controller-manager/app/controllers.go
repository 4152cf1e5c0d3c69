package app

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/pkg/controller/backupschedule"
	"github.com/kubetidb/tidb-operator/pkg/controller/compactbackup"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbcluster"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbdashboard"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbinitializer"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbmonitor"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbngmonitoring"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
)

type recorderT = record.EventRecorder

// runner is a controller ready to run.
type runner interface {
	Run(ctx context.Context, workers int)
}

// controllerBuilders build the operator's controllers, one per CRD. A new
// controller is one entry here.
var controllerBuilders = []func(*controller.Dependencies) (runner, error){
	func(deps *controller.Dependencies) (runner, error) {
		return tidbcluster.NewController(deps, tidbClusterComponents(deps))
	},
	// Backups and Restores run as Jobs of the backup-manager (pkg/controller/backup).
	build(backup.NewBackupController),
	build(backup.NewRestoreController),
	build(backupschedule.NewController),
	build(compactbackup.NewController),
	build(tidbdashboard.NewController),
	build(tidbngmonitoring.NewController),
	build(tidbinitializer.NewController),
	build(tidbmonitor.NewController),
	newDMClusterController,
}

// build adapts a controller's constructor to controllerBuilders.
func build[T runner](newController func(*controller.Dependencies) (T, error)) func(*controller.Dependencies) (runner, error) {
	return func(deps *controller.Dependencies) (runner, error) {
		return newController(deps)
	}
}

// newControllers builds one controller per CRD on deps; it fails when one
// of them cannot be built (a missing lister).
func newControllers(deps *controller.Dependencies) ([]runner, error) {
	out := make([]runner, 0, len(controllerBuilders))
	for _, b := range controllerBuilders {
		c, err := b(deps)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// tidbClusterComponents builds the steps of a cluster sync, in the
// registry's order (package members).
func tidbClusterComponents(deps *controller.Dependencies) []tidbcluster.Component {
	return members.New(controller.NewEnv(deps))
}

// eventSpamKey is client-go's spam-filter key (source, object, type) plus
// the reason: the filter lets 25 events through per key and then one per
// five minutes, and one TidbCluster's rollout alone tells more than 25
// steps; keyed by reason, a step repeated often (a leader transfer retried
// each sync) never silences the others (RollingUpdateFinished).
func eventSpamKey(e *corev1.Event) string {
	return strings.Join([]string{e.Source.Component, e.Source.Host, e.InvolvedObject.Kind, e.InvolvedObject.Namespace,
		e.InvolvedObject.Name, string(e.InvolvedObject.UID), e.InvolvedObject.APIVersion, e.Type, e.Reason}, "/")
}

// newRecorder returns an event recorder that knows the pingcap.com kinds and
// writes events as tidb-controller-manager; stop flushes and stops it.
func newRecorder(ctx context.Context, kube kubernetes.Interface) (record.EventRecorder, func()) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	b := record.NewBroadcaster(record.WithContext(ctx), record.WithCorrelatorOptions(record.CorrelatorOptions{SpamKeyFunc: eventSpamKey}))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	return b.NewRecorder(scheme, corev1.EventSource{Component: "tidb-controller-manager"}), b.Shutdown
}
