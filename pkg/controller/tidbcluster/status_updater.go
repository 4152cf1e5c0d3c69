package tidbcluster

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// StatusUpdater writes a TidbCluster's status through the status subresource.
type StatusUpdater interface {
	// UpdateStatus writes status onto tc when it differs from tc.Status and
	// returns whether it wrote. It never conflicts with spec edits; an API
	// error (or a recreated object) is returned wrapped and retried by the
	// caller's queue.
	UpdateStatus(ctx context.Context, tc *v1alpha1.TidbCluster, status *v1alpha1.TidbClusterStatus) (bool, error)
}

type statusUpdater struct {
	client versioned.Interface
}

// NewStatusUpdater returns the StatusUpdater that uses client.
func NewStatusUpdater(client versioned.Interface) StatusUpdater {
	return &statusUpdater{client: client}
}

func (u *statusUpdater) UpdateStatus(ctx context.Context, tc *v1alpha1.TidbCluster,
	status *v1alpha1.TidbClusterStatus) (bool, error) {
	if equality.Semantic.DeepEqual(&tc.Status, status) {
		return false, nil
	}
	// A JSON patch that replaces the whole status, guarded by the object's
	// UID instead of its resourceVersion: the operator is the only writer of
	// status, so a concurrent spec edit must not turn the write into a 409
	// and a retry (the TiDB Operator's conflict storms, pain point #11).
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": tc.UID},
		{"op": "add", "path": "/status", "value": status},
	})
	if err != nil {
		return false, fmt.Errorf("encode status of TidbCluster %s/%s: %w", tc.Namespace, tc.Name, err)
	}
	_, err = u.client.PingcapV1alpha1().TidbClusters(tc.Namespace).Patch(ctx, tc.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return false, fmt.Errorf("update status of TidbCluster %s/%s: %w", tc.Namespace, tc.Name, err)
	}
	return true, nil
}
