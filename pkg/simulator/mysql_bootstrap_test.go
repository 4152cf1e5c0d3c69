package simulator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/tests/sqlserver"
)

// tidbPod is a running TiDB pod of cluster laid out as the operator does:
// its config from ConfigMap <cluster>-tidb, bootstrap SQL (when sqlCM is
// set) from sqlCM's key bootstrap-sql at /etc/tidb-bootstrap/bootstrap.sql.
func tidbPod(cluster, name, sqlCM string) *corev1.Pod {
	cmVolume := func(vol, cm, key, path string) corev1.Volume {
		return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm},
			Items:                []corev1.KeyToPath{{Key: key, Path: path}}}}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: map[string]string{LabelInstance: cluster, LabelComponent: "tidb"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "tidb", VolumeMounts: []corev1.VolumeMount{
				{Name: "config", MountPath: "/etc/tidb"}}}},
			Volumes: []corev1.Volume{cmVolume("config", cluster+"-tidb", "config-file", "tidb.toml")},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if sqlCM != "" {
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: "tidb-bootstrap-sql", MountPath: "/etc/tidb-bootstrap"})
		pod.Spec.Volumes = append(pod.Spec.Volumes, cmVolume("tidb-bootstrap-sql", sqlCM, "bootstrap-sql", "bootstrap.sql"))
	}
	return pod
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: data}
}

// TestBootstrapSQLRunsOnce runs against a real MariaDB: the SQL a cluster's
// config names runs when its first TiDB pod runs, and neither the pod seen
// again (a restart) nor its second pod runs it again; a cluster without
// initialize-sql-file runs nothing; a pod not yet running is ignored.
func TestBootstrapSQLRunsOnce(t *testing.T) {
	ctx := context.Background()
	server, err := sqlserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Stop() })
	kube := kubefake.NewClientset(
		configMap("init-tidb", map[string]string{"config-file": "initialize-sql-file = '/etc/tidb-bootstrap/bootstrap.sql'\n"}),
		configMap("init-sql", map[string]string{"bootstrap-sql": "CREATE DATABASE app; " +
			"CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(10)); INSERT INTO app.t VALUES (1, 'one');"}),
		configMap("plain-tidb", map[string]string{"config-file": "[log]\nlevel = 'info'\n"}),
	)
	b := newBootstrapRunner(kube, "", server.Addr, klog.Background())

	pending := tidbPod("init", "init-tidb-0", "init-sql")
	pending.Status.Phase = corev1.PodPending
	b.consider(ctx, pending)
	if b.Ran("ns", "init") {
		t.Fatal("ran for a pod that does not run yet")
	}
	for _, pod := range []*corev1.Pod{tidbPod("init", "init-tidb-0", "init-sql"),
		tidbPod("init", "init-tidb-0", "init-sql"), tidbPod("init", "init-tidb-1", "init-sql")} {
		b.consider(ctx, pod)
	}
	b.consider(ctx, tidbPod("plain", "plain-tidb-0", ""))
	if !b.Ran("ns", "init") || b.Ran("ns", "plain") {
		t.Errorf("ran: init %v, plain %v; want true, false", b.Ran("ns", "init"), b.Ran("ns", "plain"))
	}
	db, err := server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var rows int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d rows in app.t, want the bootstrap's one", rows)
	}
}

// TestBootstrapSQLMissingConfigMap: a bootstrap ConfigMap that does not
// exist yet is not recorded as run, so the next resync tries again.
func TestBootstrapSQLMissingConfigMap(t *testing.T) {
	t.Parallel()
	kube := kubefake.NewClientset(
		configMap("init-tidb", map[string]string{"config-file": "initialize-sql-file = '/etc/tidb-bootstrap/bootstrap.sql'\n"}))
	b := newBootstrapRunner(kube, "", "127.0.0.1:1", klog.Background())
	b.consider(context.Background(), tidbPod("init", "init-tidb-0", "init-sql"))
	if b.Ran("ns", "init") || len(b.running) != 0 {
		t.Errorf("ran %v, running %v: want neither", b.Ran("ns", "init"), b.running)
	}
}
