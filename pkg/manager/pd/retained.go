package pd

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// dataClaim is one of the cluster's PD data PVCs (pd-<tc>-pd-<ordinal>).
type dataClaim struct {
	name    string
	ordinal int32
	created time.Time
}

// pdClaims lists the cluster's PD data PVCs from the cache, by ordinal:
// those being deleted and those a scale-in left behind
// (tidb.pingcap.com/pvc-defer-deleting: their member left PD) are not
// counted. Without a PVC cache it lists none.
func (c *Component) pdClaims(tc *v1alpha1.TidbCluster) []dataClaim {
	if c.meta == nil || c.meta.pvcs == nil {
		return nil
	}
	pvcs, err := c.meta.pvcs.PersistentVolumeClaims(tc.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	return dataClaims(tc, pvcs)
}

// dataClaims picks tc's PD data PVCs out of pvcs, sorted by ordinal.
func dataClaims(tc *v1alpha1.TidbCluster, pvcs []*corev1.PersistentVolumeClaim) []dataClaim {
	prefix := dataVolume + "-" + names.Member(tc.Name, names.PD) + "-"
	var out []dataClaim
	for _, pvc := range pvcs {
		rest, ok := strings.CutPrefix(pvc.Name, prefix)
		if !ok || pvc.DeletionTimestamp != nil || pvc.Annotations[label.AnnPVCDeferDeleting] != "" {
			continue
		}
		n, err := strconv.ParseUint(rest, 10, 31)
		if err != nil || strconv.FormatUint(n, 10) != rest {
			continue
		}
		out = append(out, dataClaim{name: pvc.Name, ordinal: int32(n), created: pvc.CreationTimestamp.Time})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ordinal < out[j].ordinal })
	return out
}

// retainedData explains a PD without a leader from its data PVCs (sorted
// by ordinal), or returns "" when they do not point at retained data: PVCs
// created before the TidbCluster hold an earlier cluster's data (a cluster
// deleted and created again under the same name reuses them), and PVCs of
// ordinals beyond spec.pd.replicas (and the failover pods, failover) are
// members PD's data records but that do not run. Either way PD may never
// regain a quorum. The message names only creation times and names, so it
// reads the same at every sync.
func retainedData(tc *v1alpha1.TidbCluster, failover int32, claims []dataClaim) string {
	if len(claims) == 0 {
		return ""
	}
	var older []dataClaim
	for _, cl := range claims {
		if cl.created.Before(tc.CreationTimestamp.Time) {
			older = append(older, cl)
		}
	}
	highest := claims[len(claims)-1]
	members := highest.ordinal + 1
	extra := members > tc.Spec.PD.Replicas+failover
	var parts []string
	if len(older) > 0 {
		verb := "predate"
		if len(older) == 1 {
			verb = "predates"
		}
		parts = append(parts, fmt.Sprintf("%s %s this TidbCluster (created %s, the cluster %s)",
			claimList(older), verb, stamp(oldest(older)), stamp(tc.CreationTimestamp.Time)))
	}
	if extra {
		parts = append(parts, fmt.Sprintf("PVCs exist for %d PD members (up to %s)", members, highest.name))
	}
	switch {
	case extra:
		return strings.Join(parts, " and ") + fmt.Sprintf(", so PD's data records members that do not run: "+
			"scale spec.pd.replicas back to %d, or %s", members-failover, deleteAdvice(claims))
	case len(older) > 0:
		return parts[0] + ", so PD's data comes from an earlier cluster whose members may not all run: " +
			deleteAdvice(claims)
	}
	return ""
}

// claimList names claims: "the PVC pd-basic-pd-0", "the PVCs
// pd-basic-pd-0…2" for consecutive ordinals, else every name.
func claimList(claims []dataClaim) string {
	if len(claims) == 1 {
		return "the PVC " + claims[0].name
	}
	first, last := claims[0], claims[len(claims)-1]
	if int(last.ordinal-first.ordinal) == len(claims)-1 {
		return fmt.Sprintf("the PVCs %s…%d", first.name, last.ordinal)
	}
	all := make([]string, len(claims))
	for i, cl := range claims {
		all[i] = cl.name
	}
	return "the PVCs " + strings.Join(all, ", ")
}

// deleteAdvice says how to give PD empty data: delete the claims and the
// pods using them.
func deleteAdvice(claims []dataClaim) string {
	pods := "their pods"
	if len(claims) == 1 {
		pods = "its pod"
	}
	return "delete " + claimList(claims) + " and " + pods + " to start with empty data"
}

func oldest(claims []dataClaim) time.Time {
	t := claims[0].created
	for _, cl := range claims[1:] {
		if cl.created.Before(t) {
			t = cl.created
		}
	}
	return t
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
