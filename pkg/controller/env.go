package controller

import (
	"context"
	"crypto/tls"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// NewApplier returns the write layer over deps' clients, recorder and caches.
func NewApplier(deps *Dependencies) *apply.Applier {
	return apply.NewApplier(deps.KubeClient, deps.Recorder, apply.Caches{
		Services:          deps.ServiceLister,
		ConfigMaps:        deps.ConfigMapLister,
		StatefulSets:      deps.StatefulSetLister,
		Deployments:       deps.DeploymentLister,
		ServiceAccounts:   deps.ServiceAccountLister,
		Roles:             deps.RoleLister,
		RoleBindings:      deps.RoleBindingLister,
		PersistentVolumes: deps.PVLister,
	}).WithClusters(deps.Clientset)
}

// NewEnv returns what the TidbCluster members are built from: deps' write
// layer and caches, one PD control and HTTP transport cache for every
// component client (TLS from each cluster's client Secret), and the
// command line's failover settings (one --<component>-failover-period flag
// per component with failover, keyed by its descriptor's name).
func NewEnv(deps *Dependencies) *component.Env {
	httpClients := pdapi.NewHTTPClientCache(secretTLS(deps))
	cfg := deps.CLIConfig
	return &component.Env{
		Writer:       NewApplier(deps),
		Kube:         deps.KubeClient,
		StatefulSets: deps.StatefulSetLister,
		Pods:         deps.PodLister,
		ConfigMaps:   deps.ConfigMapLister,
		PVCs:         deps.PVCLister,
		PVs:          deps.PVLister,
		PD:           pdapi.NewControlWithHTTPClients(httpClients, 0),
		HTTP:         httpClients,
		Recorder:     deps.Recorder,
		Clock:        deps.Clock,
		AutoFailover: cfg.AutoFailover,
		FailoverPeriods: map[string]time.Duration{
			components.PD.Name: cfg.PDFailoverPeriod, components.TiKV.Name: cfg.TiKVFailoverPeriod,
			components.TiDB.Name: cfg.TiDBFailoverPeriod, components.TiFlash.Name: cfg.TiFlashFailoverPeriod,
			"dm-master": cfg.DMMasterFailoverPeriod, "dm-worker": cfg.DMWorkerFailoverPeriod,
		},
		NodeFailure: component.NodeFailureConfig{
			Detect: cfg.DetectNodeFailure, HardRecoveryPeriod: cfg.PodHardRecoveryPeriod,
			RestartGap: cfg.RestartToDeleteStoreGap,
		},
		DiscoveryImage:       cfg.TiDBDiscoveryImage,
		VolumeModifying:      cfg.VolumeModifying,
		Peers:                &component.Peers{},
		NodesDenied:          !cfg.ReadNodes,
		StorageClassesDenied: !cfg.ReadStorageClasses,
	}
}

// secretTLS loads a cluster's client certificate from its Secret. The
// Secret is read from the API (it is the user's, not labelled for the
// operator's caches) only when a client is built, which the PD control caches.
func secretTLS(deps *Dependencies) pdapi.TLSConfigFunc {
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
