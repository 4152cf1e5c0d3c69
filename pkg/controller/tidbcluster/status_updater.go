package tidbcluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// StatusUpdater writes a TidbCluster's status through the status subresource.
type StatusUpdater interface {
	// UpdateStatus writes status onto tc when it differs from tc.Status and
	// returns whether it wrote. On a conflict it re-reads the object and
	// retries; other API errors are returned wrapped.
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
	clusters := u.client.PingcapV1alpha1().TidbClusters(tc.Namespace)
	obj := tc.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj.Status = *status.DeepCopy()
		_, err := clusters.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			return nil
		}
		latest, getErr := clusters.Get(ctx, tc.Name, metav1.GetOptions{})
		if getErr != nil {
			return err // report the update error, not the re-read
		}
		if latest.UID != tc.UID {
			return fmt.Errorf("TidbCluster %s/%s was recreated while its status was written", tc.Namespace, tc.Name)
		}
		obj = latest
		return err
	})
	if err != nil {
		return false, fmt.Errorf("update status of TidbCluster %s/%s: %w", tc.Namespace, tc.Name, err)
	}
	return true, nil
}
