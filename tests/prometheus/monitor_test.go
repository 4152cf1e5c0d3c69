//go:build integration

package prometheus

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// secureCluster is a second, TLS cluster the monitor lists: its jobs must
// scrape with https and the client certificate. Only its object matters
// here (the operator reads tlsCluster from it).
const secureCluster = `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: secure
spec:
  version: v8.5.0
  tlsCluster: {enabled: true}
  pd: {baseImage: pingcap/pd, replicas: 1, requests: {storage: 1Gi}}
`

const twoClusterMonitor = `
apiVersion: pingcap.com/v1alpha1
kind: TidbMonitor
metadata:
  name: tm
spec:
  clusters: [{name: basic}, {name: secure}]
  prometheus: {baseImage: prom/prometheus, version: v2.27.1, retentionTime: 2d}
  grafana: {baseImage: grafana/grafana, version: 7.5.11}
  initializer: {baseImage: pingcap/tidb-monitor-initializer, version: v8.5.0}
  reloader: {baseImage: pingcap/tidb-monitor-reloader, version: v1.0.1}
  externalLabels: {region: test}
`

// TestTidbMonitorConfigInARealPrometheus has the operator generate the
// Prometheus configuration of a TidbMonitor over two clusters (basic,
// secure with TLS) and checks it with Debian's real promtool and
// prometheus: (i) promtool check config accepts it — as is, its only
// complaints are the kubernetes_sd_configs Debian's build lacks; with each
// kubernetes_sd_config replaced by the HTTP stand-in (podsd_test.go) it is
// valid; (ii) a Prometheus on 127.0.0.1 running that configuration finds
// the KWOK pods of basic through the real API server, scrapes the
// simulator's PD/TiKV/TiDB /metrics at the pods' IPs (through the
// simulator as proxy_url: no pod network here) and answers up{job=…} and
// component series with the labels the relabelling sets. The only changes
// made to the generated file are those: discovery, proxy_url, and the TLS
// file paths moved into a temp dir holding a test certificate.
func TestTidbMonitorConfigInARealPrometheus(t *testing.T) {
	prom, promtool := ensurePrometheus(t)
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	ns := env.Namespace
	sim, err := simulator.New(simulator.Config{Kube: env.Kube, Dynamic: env.Dynamic, Namespace: ns, Listen: simAddr,
		Options: simulator.DefaultOptions()}, klog.Background().WithName("simulator"))
	if err != nil {
		t.Fatal(err)
	}
	simCtx, stopSim := context.WithCancel(context.Background())
	t.Cleanup(stopSim)
	if err := sim.Start(simCtx); err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	operator.StartManager(t, ns, func(o *app.Options) { o.LeaderElect = false })
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), ns)
	framework.ApplyYAML(t, env.Ctx, secureCluster, ns)
	framework.ApplyYAML(t, env.Ctx, twoClusterMonitor, ns)

	var generated string
	framework.WaitFor(t, env.Ctx, 2*time.Minute, "ConfigMap tm-monitor scrapes both clusters, secure with https", func(ctx context.Context) (bool, error) {
		cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "tm-monitor", metav1.GetOptions{})
		if err != nil {
			framework.Observef(ctx, "%v", err)
			return false, nil
		}
		generated = cm.Data["prometheus.yml"]
		ok := strings.Contains(generated, "job_name: "+ns+"/basic/tikv") && strings.Contains(generated, "job_name: "+ns+"/secure/pd") &&
			strings.Contains(generated, "scheme: https")
		framework.Observef(ctx, "prometheus.yml has both clusters: %v", ok)
		return ok, nil
	})
	dir := t.TempDir()
	raw := filepath.Join(dir, "generated.yml")
	writeFile(t, raw, generated)

	// (i) promtool, as is: only the missing Kubernetes discovery is refused.
	out, _ := runPromtool(promtool, "check", "config", raw)
	t.Logf("promtool check config of the generated file:\n%s", out)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "line ") && !strings.Contains(line, "field kubernetes_sd_configs not found") {
			t.Errorf("promtool refuses more than Debian's missing kubernetes_sd: %s\n%s", line, out)
		}
	}
	if !strings.Contains(out, "kubernetes_sd_configs") {
		t.Logf("promtool accepts kubernetes_sd_configs here:\n%s", out)
		if !strings.Contains(out, "SUCCESS") {
			t.Errorf("promtool check config failed:\n%s", out)
		}
	}
	adjusted := filepath.Join(dir, "prometheus.yml")
	writeFile(t, adjusted, adjust(t, generated, startPodSD(t, env.Kube), sim.URL(), dir))
	out, err = runPromtool(promtool, "check", "config", adjusted)
	if err != nil || !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool check config of the adjusted configuration: %v\n%s", err, out)
	}
	t.Logf("promtool check config of the adjusted file:\n%s", out)

	// (ii) a real Prometheus scrapes basic's simulated pods.
	srv := startPrometheusConfig(t, prom, adjusted)
	checks := []struct {
		query string
		want  int
	}{
		{`up{job="` + ns + `/basic/pd",tidb_cluster="basic",component="pd",namespace="` + ns + `"} == 1`, 3},
		{`up{job="` + ns + `/basic/tikv"} == 1`, 3},
		{`up{job="` + ns + `/basic/tidb"} == 1`, 2},
		{`pd_cluster_status{job="` + ns + `/basic/pd",type="store_count"}`, 3},
		{`tikv_raftstore_region_count{job="` + ns + `/basic/tikv",instance=~"basic-tikv-[0-2]"}`, 3},
		{`tidb_server_connections{job="` + ns + `/basic/tidb",instance=~"basic-tidb-[01]"}`, 2},
	}
	for _, c := range checks {
		framework.WaitFor(t, env.Ctx, 3*time.Minute, "Prometheus answers "+c.query, func(ctx context.Context) (bool, error) {
			got, err := srv.query(ctx, c.query)
			if err != nil {
				return false, err
			}
			framework.Observef(ctx, "%s: %d series %v", c.query, len(got), got)
			if len(got) == c.want {
				t.Logf("%s: %d series, first %v = %s", c.query, len(got), got[0].Metric, got[0].value())
			}
			return len(got) == c.want, nil
		})
	}
}

// adjust rewrites the generated configuration for this environment:
// kubernetes_sd_configs become the HTTP stand-in for the same namespaces,
// every job scrapes through the simulator (proxy_url), and TLS files point
// into dir, which gets a test CA and client certificate.
func adjust(t *testing.T, generated, sdURL, proxyURL, dir string) string {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(generated), &cfg); err != nil {
		t.Fatal(err)
	}
	writeTestCerts(t, dir)
	jobs, _ := cfg["scrape_configs"].([]any)
	for _, j := range jobs {
		job := j.(map[string]any)
		var sds []any
		for _, k := range job["kubernetes_sd_configs"].([]any) {
			for _, n := range k.(map[string]any)["namespaces"].(map[string]any)["names"].([]any) {
				sds = append(sds, map[string]any{"url": sdURL + "?namespace=" + n.(string), "refresh_interval": "2s"})
			}
		}
		delete(job, "kubernetes_sd_configs")
		job["http_sd_configs"] = sds
		job["proxy_url"] = proxyURL
		if tls, ok := job["tls_config"].(map[string]any); ok {
			for _, k := range []string{"ca_file", "cert_file", "key_file"} {
				tls[k] = filepath.Join(dir, filepath.Base(tls[k].(string)))
			}
		}
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeTestCerts writes a self-signed ca.crt and a client tls.crt/tls.key into dir.
func writeTestCerts(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tidb-monitor-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, filepath.Join(dir, "ca.crt"), cert)
	writeFile(t, filepath.Join(dir, "tls.crt"), cert)
	writeFile(t, filepath.Join(dir, "tls.key"), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func runPromtool(promtool string, args ...string) (string, error) {
	out, err := execCombined(promtool, args...)
	if err != nil {
		return out, fmt.Errorf("promtool %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}
