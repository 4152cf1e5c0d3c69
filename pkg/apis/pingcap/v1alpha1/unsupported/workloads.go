package unsupported

import (
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TidbInitializer lists the TidbInitializer fields nothing acts on yet.
var TidbInitializer = []Field[v1alpha1.TidbInitializer]{
	{
		Path: "spec.image",
		Why: "the Job runs the operator's own initializer program from the operator's image; " +
			"a v1 image with python and MySQLdb cannot run it",
		Set:     func(ti *v1alpha1.TidbInitializer) bool { return ti.Spec.Image != "" },
		Example: func(ti *v1alpha1.TidbInitializer) { ti.Spec.Image = "tnir/mysqlclient" },
	},
}

// TidbDashboard lists the TidbDashboard fields nothing acts on yet: none.
var TidbDashboard []Field[v1alpha1.TidbDashboard]

// TidbNGMonitoring lists the TidbNGMonitoring fields nothing acts on yet:
// none.
var TidbNGMonitoring []Field[v1alpha1.TidbNGMonitoring]
