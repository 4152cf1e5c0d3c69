//go:build integration

package badinput

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// sentinelCluster is the TidbCluster the sentinel TidbInitializer
// initializes: the initializer Job is named after its cluster, and the
// corpus's initializers point at the healthy cluster, so the sentinel
// needs a cluster of its own to get a Job of its own.
const sentinelCluster = "sentinel"

// sentinels are one valid object of each of the four kinds that build
// objects for a TidbCluster, and a DMCluster, created with the corpus in the same
// namespace. Each must get its objects written (owned by it) while the
// corpus exists: the evidence that no case of its kind stopped another
// object of that kind.
const sentinels = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: ` + sentinelCluster + `
spec:
  version: v8.5.0
  pd: {baseImage: pingcap/pd, replicas: 1, maxFailoverCount: 0, requests: {storage: 1Gi}}
  tikv: {baseImage: pingcap/tikv, replicas: 1, maxFailoverCount: 0, requests: {storage: 1Gi}}
  tidb: {baseImage: pingcap/tidb, replicas: 1, maxFailoverCount: 0}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbMonitor
metadata:
  name: sentinel-mon
spec:
  clusters: [{name: ` + healthyName + `}]
  prometheus: {baseImage: prom/prometheus, version: v2.27.1}
  grafana: {baseImage: grafana/grafana, version: 7.5.11}
  initializer: {baseImage: pingcap/tidb-monitor-initializer, version: v8.5.0}
  reloader: {baseImage: pingcap/tidb-monitor-reloader, version: v1.0.1}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbDashboard
metadata:
  name: sentinel-dash
spec:
  clusters: [{name: ` + healthyName + `}]
  baseImage: pingcap/tidb-dashboard
  version: v8.5.0
  requests: {storage: 1Gi}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbNGMonitoring
metadata:
  name: sentinel-ngm
spec:
  clusters: [{name: ` + healthyName + `}]
  ngMonitoring: {baseImage: pingcap/ng-monitoring, version: v8.5.0, requests: {storage: 1Gi}}
---
apiVersion: pingcap.com/v1alpha1
kind: TidbInitializer
metadata:
  name: sentinel-init
spec:
  image: tnir/mysqlclient
  cluster: {name: ` + sentinelCluster + `}
---
apiVersion: pingcap.com/v1alpha1
kind: DMCluster
metadata:
  name: sentinel-dm
spec:
  version: v8.5.7
  discovery: {}
  master: {baseImage: pingcap/dm, replicas: 1, maxFailoverCount: 0, storageSize: 1Gi}
  worker: {baseImage: pingcap/dm, replicas: 1, maxFailoverCount: 0, storageSize: 1Gi}
`

// sentinel is one valid object and what it must get written.
type sentinel struct {
	kind, name string
	// wants is the kind of object written for it (owned by it).
	wants string
}

// sentinelObjects lists the sentinels by kind.
var sentinelObjects = map[string]sentinel{
	"TidbMonitor":      {kind: "TidbMonitor", name: "sentinel-mon", wants: "StatefulSet"},
	"TidbDashboard":    {kind: "TidbDashboard", name: "sentinel-dash", wants: "StatefulSet"},
	"TidbNGMonitoring": {kind: "TidbNGMonitoring", name: "sentinel-ngm", wants: "StatefulSet"},
	"TidbInitializer":  {kind: "TidbInitializer", name: "sentinel-init", wants: "Job"},
	"DMCluster":        {kind: "DMCluster", name: "sentinel-dm", wants: "StatefulSet"},
}

// waitSentinels waits until every sentinel has its object written, owned
// by it, and no FailedValidation Warning was recorded for it; it returns
// the kinds whose sentinel was reconciled (and fails the test for any
// other).
func waitSentinels(t *testing.T, env *framework.Env, timeout time.Duration) map[string]bool {
	t.Helper()
	uids := map[string]types.UID{}
	for kind, s := range sentinelObjects {
		obj, err := env.Dynamic.Resource(resources[kind]).Namespace(env.Namespace).Get(env.Ctx, s.name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("sentinel %s %s: %v", kind, s.name, err)
			continue
		}
		uids[kind] = obj.GetUID()
	}
	done := map[string]bool{}
	var last string
	ctx, cancel := context.WithTimeout(env.Ctx, timeout)
	defer cancel()
	for len(done) < len(uids) && ctx.Err() == nil {
		all, err := written(ctx, env)
		if err == nil {
			last = sentinelRound(ctx, env, uids, all, done)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	for kind := range uids {
		if !done[kind] {
			t.Errorf("sentinel %s %s was not reconciled within %s beside the corpus: %s", kind, sentinelObjects[kind].name, timeout, last)
		}
	}
	return done
}

// sentinelRound marks done every sentinel whose wanted object is written
// and owned by it, unless the operator reported it invalid; it returns what
// is still missing.
func sentinelRound(ctx context.Context, env *framework.Env, uids map[string]types.UID, all map[string][]metav1.Object, done map[string]bool) string {
	events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var missing []string
	for kind, uid := range uids {
		s := sentinelObjects[kind]
		if e := warningFor(events.Items, uid, "FailedValidation"); e != nil {
			delete(done, kind)
			missing = append(missing, fmt.Sprintf("%s %s reported invalid: %s", kind, s.name, e.Message))
			continue
		}
		if done[kind] {
			continue
		}
		if ownsOne(all[s.wants], uid) {
			done[kind] = true
			continue
		}
		missing = append(missing, fmt.Sprintf("no %s of %s %s yet", s.wants, kind, s.name))
	}
	return strings.Join(missing, "; ")
}

// warningFor returns the first Warning event of reason about the object uid.
func warningFor(events []corev1.Event, uid types.UID, reason string) *corev1.Event {
	for i := range events {
		if e := &events[i]; e.InvolvedObject.UID == uid && e.Type == corev1.EventTypeWarning && e.Reason == reason {
			return e
		}
	}
	return nil
}

// ownsOne reports whether some object of objs has an owner reference to uid.
func ownsOne(objs []metav1.Object, uid types.UID) bool {
	for _, o := range objs {
		for _, ref := range o.GetOwnerReferences() {
			if ref.UID == uid {
				return true
			}
		}
	}
	return false
}
