package app

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/dmcluster"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/manager/discovery"
	"github.com/kubetidb/tidb-operator/pkg/manager/dm"
)

// newDMClusterController builds the DMCluster controller: discovery, then
// dm-master and dm-worker (package dm), then the PVs' reclaim policy, on their own Env so that the DM
// components' names never meet the TidbCluster ones.
func newDMClusterController(deps *controller.Dependencies) (runner, error) {
	env := controller.NewEnv(deps)
	ctl := dmapi.NewControl(dmapi.SecretTLS(func(ctx context.Context, namespace, name string) (map[string][]byte, error) {
		s, err := deps.KubeClient.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return s.Data, nil
	}), 0)
	members := []dmcluster.Member{discovery.NewDM(env)}
	for _, m := range dm.Members(env, ctl) {
		members = append(members, m)
	}
	members = append(members, &dmcluster.Reclaim{Writer: env.Writer, PVCs: env.PVCs, PVs: env.PVs})
	return dmcluster.NewController(deps, members)
}
