package tidbcluster

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// checkedObjects remembers, per TidbCluster, the resourceVersion whose
// built objects last passed the API server's checks. The objects are built
// from the object alone, so a cluster that has not changed since (every
// converged resync) is not built and checked again: that would double a
// converged sync's CPU. Entries of deleted clusters are not removed one by
// one; the map starts afresh past maxCheckedObjects (costing one more check
// per cluster). Safe for the controller's concurrent workers.
const maxCheckedObjects = 20000

type checkedObjects struct {
	mu sync.Mutex
	rv map[types.UID]string
}

func (c *checkedObjects) has(tc *v1alpha1.TidbCluster) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tc.ResourceVersion != "" && c.rv[tc.UID] == tc.ResourceVersion
}

func (c *checkedObjects) add(tc *v1alpha1.TidbCluster) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rv == nil || len(c.rv) >= maxCheckedObjects {
		c.rv = map[types.UID]string{}
	}
	c.rv[tc.UID] = tc.ResourceVersion
}
