// Package controller is the shell every controller of the operator shares:
// the Dependencies they are built from (listers, clients, recorder, clock,
// command-line configuration), the workqueue worker that drives them, and
// the event handlers that resolve an owned object to its owner's key.
// Component packages never import it; their flow control is package flow.
package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/client/informers/externalversions"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/metrics"
)

// CLIConfig is what the command line tells the controllers.
type CLIConfig struct {
	// Workers is the number of concurrent syncs per controller.
	Workers int
	// ClusterScoped watches every namespace; otherwise only Namespace.
	ClusterScoped bool
	// Namespace is the operator's own namespace (leader-election lock, and
	// the only watched namespace when not cluster-scoped).
	Namespace string
	// Selector is a label selector restricting which custom resources this
	// operator instance handles; empty means all.
	Selector string
	// ResyncDuration is the custom resources' informer resync period: every
	// TidbCluster, Backup, … is synced at least this often, which also
	// refreshes PD/TiDB-derived status. Built-in kinds do not resync.
	ResyncDuration time.Duration
	// StatusRefreshInterval is how often the members of a converged cluster
	// are read again from PD and TiDB: at the first resync at least this
	// long after the last reading (75 s with the 30 s resync: every 90 s).
	// Syncs in between keep the members in status. Zero reads them on every
	// sync, as the TiDB Operator does. A change of the spec or of a
	// StatefulSet's status, a wait or an error always reads them again.
	StatusRefreshInterval time.Duration
	// StatusProgressInterval is how long, at most, a status that only shows
	// progress (tidbcluster.ProgressOnly) waits to be written with the next
	// one while the cluster converges. Zero writes every change at once.
	StatusProgressInterval time.Duration
	// AutoFailover enables failover of PD, TiKV, TiDB and TiFlash members.
	AutoFailover bool
	// PDFailoverPeriod, TiKVFailoverPeriod, TiDBFailoverPeriod and
	// TiFlashFailoverPeriod are the grace periods before a failed member is
	// replaced.
	PDFailoverPeriod      time.Duration
	TiKVFailoverPeriod    time.Duration
	TiDBFailoverPeriod    time.Duration
	TiFlashFailoverPeriod time.Duration
	// DMMasterFailoverPeriod and DMWorkerFailoverPeriod are the grace
	// periods before a failed dm-master member is replaced and before an
	// offline dm-worker gets an extra pod.
	DMMasterFailoverPeriod time.Duration
	DMWorkerFailoverPeriod time.Duration
	// DetectNodeFailure marks failed members host-down by inspecting nodes.
	DetectNodeFailure bool
	// PodHardRecoveryPeriod is how long a failure lasts before host-down.
	PodHardRecoveryPeriod time.Duration
	// RestartToDeleteStoreGap is how long a failed member's pod, restarted
	// by auto-failure-recovery, must have run before its PD member or store
	// is deleted (10m, the TiDB Operator's constant; no flag: tests shorten it).
	RestartToDeleteStoreGap time.Duration
	// TiDBBackupManagerImage runs backup and restore jobs.
	TiDBBackupManagerImage string
	// TiDBDiscoveryImage runs the per-cluster discovery Deployment.
	TiDBDiscoveryImage string
	// VolumeModifying is the feature gate VolumeModifying (--features): a
	// changed volumeAttributesClassName moves the existing PVCs to the new
	// VolumeAttributesClass, one member at a time, and the StatefulSet is
	// recreated (pods kept) so that new PVCs get it too. Off, such a change
	// is named in the Unsupported condition, as the TiDB Operator leaves it.
	VolumeModifying bool
	// ManagePersistentVolumes lets the operator watch and patch the
	// (cluster-scoped) PVs bound to cluster PVCs: spec.pvReclaimPolicy and
	// enablePVReclaim need it. A namespaced operator without
	// --cluster-permission-pv has it off (ApplyClusterPermissions).
	ManagePersistentVolumes bool
	// ReadNodes lets the operator get Nodes: store and TiDB topology labels
	// and --detect-node-failure need it. Off, neither reads a node and each
	// cluster names what it misses in its Unsupported condition.
	ReadNodes bool
	// ReadStorageClasses lets the operator get StorageClasses: growing a PVC
	// needs to know that its class allows expansion. Off, no PVC is grown.
	ReadStorageClasses bool
}

// ClusterPermissions are the cluster-wide permissions a namespaced
// operator may hold (the chart's controllerManager.clusterPermissions,
// passed as --cluster-permission-node, -pv and -sc). A cluster-scoped
// operator holds them all.
type ClusterPermissions struct {
	Nodes, PersistentVolumes, StorageClasses bool
}

// ApplyClusterPermissions sets what the operator reads and writes outside
// its namespaces from the permissions it holds: everything when
// cluster-scoped, else only what perms grants (PVs additionally only while
// --manage-persistent-volumes is on).
func (c *CLIConfig) ApplyClusterPermissions(perms ClusterPermissions) {
	if c.ClusterScoped {
		perms = ClusterPermissions{Nodes: true, PersistentVolumes: true, StorageClasses: true}
	}
	c.ReadNodes, c.ReadStorageClasses = perms.Nodes, perms.StorageClasses
	c.ManagePersistentVolumes = c.ManagePersistentVolumes && perms.PersistentVolumes
}

// PVsDenied names, for the Unsupported condition of an object whose pods
// have PVCs, what is not done when cfg does not let the operator patch PVs
// (a namespaced install without the chart's
// controllerManager.clusterPermissions.persistentvolumes); "" when it may.
func PVsDenied(cfg *CLIConfig) string {
	if cfg == nil || cfg.ManagePersistentVolumes {
		return ""
	}
	return "the PVs' reclaim policy (Retain) and labels (needs the chart value " + component.PersistentVolumePermission + ")"
}

// DefaultCLIConfig returns the defaults of the TiDB Operator's flags.
func DefaultCLIConfig() *CLIConfig {
	return &CLIConfig{
		Workers:                 5,
		ClusterScoped:           true,
		ResyncDuration:          30 * time.Second,
		StatusRefreshInterval:   75 * time.Second,
		StatusProgressInterval:  15 * time.Second,
		AutoFailover:            true,
		PDFailoverPeriod:        5 * time.Minute,
		TiKVFailoverPeriod:      5 * time.Minute,
		TiDBFailoverPeriod:      5 * time.Minute,
		TiFlashFailoverPeriod:   5 * time.Minute,
		DMMasterFailoverPeriod:  5 * time.Minute,
		DMWorkerFailoverPeriod:  5 * time.Minute,
		PodHardRecoveryPeriod:   24 * time.Hour,
		RestartToDeleteStoreGap: 10 * time.Minute,
		TiDBBackupManagerImage:  "pingcap/tidb-backup-manager:latest",
		TiDBDiscoveryImage:      "pingcap/tidb-operator:latest",
		ManagePersistentVolumes: true,
		ReadNodes:               true,
		ReadStorageClasses:      true,
	}
}

// Dependencies is everything a controller or manager may use, built once
// per process. Constructors take only the fields they need from it.
type Dependencies struct {
	CLIConfig *CLIConfig
	// KubeClient and Clientset write to the API server.
	KubeClient kubernetes.Interface
	Clientset  versioned.Interface
	// KubeInformerFactory caches only objects labelled
	// app.kubernetes.io/managed-by=tidb-operator, so memory does not grow
	// with the rest of the cluster.
	KubeInformerFactory kubeinformers.SharedInformerFactory
	// JobInformerFactory caches only the Jobs of backups and restores
	// (app.kubernetes.io/managed-by backup-operator or restore-operator),
	// without their pod templates (StripJob).
	JobInformerFactory kubeinformers.SharedInformerFactory
	// InformerFactory caches pingcap.com objects (filtered by --selector).
	InformerFactory externalversions.SharedInformerFactory
	Recorder        record.EventRecorder
	Clock           clock.PassiveClock
	Metrics         *metrics.Metrics

	TiDBClusterLister    listers.TidbClusterLister
	BackupLister         listers.BackupLister
	RestoreLister        listers.RestoreLister
	BackupScheduleLister listers.BackupScheduleLister
	// CompactBackupLister reads CompactBackups.
	CompactBackupLister listers.CompactBackupLister
	// DMClusterLister reads DMClusters.
	DMClusterLister   listers.DMClusterLister
	StatefulSetLister appslisters.StatefulSetLister
	DeploymentLister  appslisters.DeploymentLister
	ServiceLister     corelisters.ServiceLister
	ConfigMapLister   corelisters.ConfigMapLister
	PodLister         corelisters.PodLister
	PVCLister         corelisters.PersistentVolumeClaimLister
	// PVLister caches the PVs the operator labelled; nil unless
	// CLIConfig.ManagePersistentVolumes.
	PVLister             corelisters.PersistentVolumeLister
	ServiceAccountLister corelisters.ServiceAccountLister
	RoleLister           rbaclisters.RoleLister
	RoleBindingLister    rbaclisters.RoleBindingLister
	JobLister            batchlisters.JobLister

	// TiDBInitializerLister, TiDBMonitorLister, TiDBDashboardLister and
	// TiDBNGMonitoringLister read the monitoring and initialization kinds;
	// their informers are InformerFactory.Pingcap().V1alpha1().TidbInitializers()
	// and so on, started with the others by StartInformers.
	TiDBInitializerLister  listers.TidbInitializerLister
	TiDBMonitorLister      listers.TidbMonitorLister
	TiDBDashboardLister    listers.TidbDashboardLister
	TiDBNGMonitoringLister listers.TidbNGMonitoringLister
}

// Managed-by values of the Jobs the Backup and Restore controllers create.
const (
	BackupJobManagedBy  = "backup-operator"
	RestoreJobManagedBy = "restore-operator"
)

// NewDependencies builds informer factories scoped as cfg says and the
// listers every controller reads from. Nothing is started: call
// StartInformers, then WaitForCacheSync.
func NewDependencies(cfg *CLIConfig, kube kubernetes.Interface, pc versioned.Interface,
	recorder record.EventRecorder, m *metrics.Metrics) *Dependencies {
	ns := metav1.NamespaceAll
	if !cfg.ClusterScoped {
		ns = cfg.Namespace
	}
	managed := labels.SelectorFromSet(labels.Set{label.ManagedByLabelKey: label.TiDBOperator}).String()
	// Only the custom resources resync: every handler of a built-in kind
	// drops resyncs (EnqueueOwnerHandler, the pod maintenance handler), so
	// resyncing 24 objects per cluster every period would cost only their
	// notifications (and the garbage of them) for nothing.
	kubeFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0,
		kubeinformers.WithNamespace(ns),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = managed }),
		kubeinformers.WithTransform(StripCached))
	registerPodInformer(kubeFactory, ns, managed)
	pcFactory := externalversions.NewSharedInformerFactoryWithOptions(pc, cfg.ResyncDuration,
		externalversions.WithNamespace(ns),
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = cfg.Selector }),
		externalversions.WithTransform(DropManagedFields))
	jobs := labels.NewSelector()
	if r, err := labels.NewRequirement(label.ManagedByLabelKey, "in", []string{BackupJobManagedBy, RestoreJobManagedBy}); err == nil {
		jobs = jobs.Add(*r)
	}
	jobFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0,
		kubeinformers.WithNamespace(ns),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = jobs.String() }),
		kubeinformers.WithTransform(StripJob))
	return newDependencies(cfg, kube, pc, kubeFactory, jobFactory, pcFactory, recorder, m)
}

func newDependencies(cfg *CLIConfig, kube kubernetes.Interface, pc versioned.Interface,
	kubeFactory, jobFactory kubeinformers.SharedInformerFactory, pcFactory externalversions.SharedInformerFactory,
	recorder record.EventRecorder, m *metrics.Metrics) *Dependencies {
	pingcap := pcFactory.Pingcap().V1alpha1()
	var pvs corelisters.PersistentVolumeLister
	if cfg.ManagePersistentVolumes {
		pvs = kubeFactory.Core().V1().PersistentVolumes().Lister()
	}
	return &Dependencies{
		CLIConfig:            cfg,
		KubeClient:           kube,
		Clientset:            pc,
		KubeInformerFactory:  kubeFactory,
		JobInformerFactory:   jobFactory,
		InformerFactory:      pcFactory,
		Recorder:             recorder,
		Clock:                clock.RealClock{},
		Metrics:              m,
		TiDBClusterLister:    pingcap.TidbClusters().Lister(),
		BackupLister:         pingcap.Backups().Lister(),
		RestoreLister:        pingcap.Restores().Lister(),
		BackupScheduleLister: pingcap.BackupSchedules().Lister(),
		CompactBackupLister:  pingcap.CompactBackups().Lister(),
		DMClusterLister:      pingcap.DMClusters().Lister(),
		StatefulSetLister:    kubeFactory.Apps().V1().StatefulSets().Lister(),
		DeploymentLister:     kubeFactory.Apps().V1().Deployments().Lister(),
		ServiceLister:        kubeFactory.Core().V1().Services().Lister(),
		ConfigMapLister:      kubeFactory.Core().V1().ConfigMaps().Lister(),
		PodLister:            kubeFactory.Core().V1().Pods().Lister(),
		PVCLister:            kubeFactory.Core().V1().PersistentVolumeClaims().Lister(),
		PVLister:             pvs,
		ServiceAccountLister: kubeFactory.Core().V1().ServiceAccounts().Lister(),
		RoleLister:           kubeFactory.Rbac().V1().Roles().Lister(),
		RoleBindingLister:    kubeFactory.Rbac().V1().RoleBindings().Lister(),
		JobLister:            jobFactory.Batch().V1().Jobs().Lister(),

		TiDBInitializerLister:  pingcap.TidbInitializers().Lister(),
		TiDBMonitorLister:      pingcap.TidbMonitors().Lister(),
		TiDBDashboardLister:    pingcap.TidbDashboards().Lister(),
		TiDBNGMonitoringLister: pingcap.TidbNGMonitorings().Lister(),
	}
}

// registerPodInformer makes the factory's pod informer cache the pods
// managed-by=tidb-operator except the discovery pods: nothing reads those
// (the discovery Deployment's status tells whether it runs), and at 1000
// clusters they would be a thousand cached pods and their updates.
func registerPodInformer(f kubeinformers.SharedInformerFactory, namespace, managed string) {
	selector := managed + "," + label.ComponentLabelKey + "!=" + label.DiscoveryLabelVal
	f.InformerFor(&corev1.Pod{}, func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return coreinformers.NewFilteredPodInformer(client, namespace, resync,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			func(o *metav1.ListOptions) { o.LabelSelector = selector })
	})
}

// StartInformers starts every informer registered so far; they stop when
// stopCh closes.
func (d *Dependencies) StartInformers(stopCh <-chan struct{}) {
	d.KubeInformerFactory.Start(stopCh)
	d.JobInformerFactory.Start(stopCh)
	d.InformerFactory.Start(stopCh)
}

// WaitForCacheSync blocks until every started informer has synced, and
// reports false when stopCh closed first.
func (d *Dependencies) WaitForCacheSync(stopCh <-chan struct{}) bool {
	for _, synced := range d.KubeInformerFactory.WaitForCacheSync(stopCh) {
		if !synced {
			return false
		}
	}
	for _, synced := range d.JobInformerFactory.WaitForCacheSync(stopCh) {
		if !synced {
			return false
		}
	}
	for _, synced := range d.InformerFactory.WaitForCacheSync(stopCh) {
		if !synced {
			return false
		}
	}
	return true
}
