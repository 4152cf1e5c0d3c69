//go:build integration

package api

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestOperatorRefusesAChangeTheCRDCannotSee: PD's replication section may
// not change once PD's StatefulSet exists, which no CRD rule can see (the
// config is schemaless). The API server stores the change; the operator
// refuses it with a FailedValidation event and Degraded naming the field,
// writes nothing (the StatefulSet keeps its ConfigMap), and takes the next
// allowed change.
func TestOperatorRefusesAChangeTheCRDCannotSee(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx := env.Ctx
	framework.ApplyYAML(t, ctx, tcYAML("livecheck", "version: v8.5.0, configUpdateStrategy: RollingUpdate, pd: {replicas: 1, requests: {storage: 1Gi}, config: {replication: {max-replicas: 1}}}"), env.Namespace)

	var mounted string
	framework.WaitFor(t, ctx, 60*time.Second, "PD's StatefulSet mounts a ConfigMap", func(ctx context.Context) (bool, error) {
		mounted = mountedConfig(ctx, env, "livecheck-pd")
		return mounted != "", nil
	})
	patch := func(config string) {
		t.Helper()
		body := `{"spec": {"pd": {"config": ` + config + `}}}`
		if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(ctx, "livecheck", types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// invalid reports whether the operator has seen the last change and
	// found the spec invalid, and the Degraded condition it set.
	invalid := func(ctx context.Context) (observed, refused bool, c *metav1.Condition) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "livecheck", metav1.GetOptions{})
		if err != nil || tc.Status.ObservedGeneration != tc.Generation {
			return false, false, nil
		}
		c = meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterDegraded)
		return true, c != nil && c.Status == metav1.ConditionTrue && c.Reason == "InvalidSpec", c
	}

	patch(`{"replication": {"max-replicas": 3}}`)
	framework.WaitFor(t, ctx, 60*time.Second, "Degraded InvalidSpec naming spec.pd.config.replication", func(ctx context.Context) (bool, error) {
		_, refused, c := invalid(ctx)
		framework.Observef(ctx, "Degraded %+v", c)
		return refused && strings.Contains(c.Message, "spec.pd.config.replication"), nil
	})
	events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": "livecheck", "reason": "FailedValidation"}.String()})
	if err != nil || len(events.Items) == 0 || !strings.Contains(events.Items[0].Message, "pd-ctl") {
		t.Fatalf("want a FailedValidation event saying to use pd-ctl: %v %+v", err, events)
	}
	if got := mountedConfig(ctx, env, "livecheck-pd"); got != mounted {
		t.Fatalf("the refused change was written: PD mounts %s, was %s", got, mounted)
	}

	patch(`{"replication": {"max-replicas": 1}, "log": {"level": "warn"}}`)
	framework.WaitFor(t, ctx, 60*time.Second, "the allowed change is taken", func(ctx context.Context) (bool, error) {
		observed, refused, c := invalid(ctx)
		got := mountedConfig(ctx, env, "livecheck-pd")
		framework.Observef(ctx, "Degraded %+v, mounts %s", c, got)
		return observed && !refused && got != "" && got != mounted, nil
	})
}

// mountedConfig is the ConfigMap StatefulSet name mounts as its config, "" for none.
func mountedConfig(ctx context.Context, env *framework.Env, name string) string {
	sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return configVolumeOf(sts)
}

func configVolumeOf(sts *appsv1.StatefulSet) string {
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == "config" && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}
