package simulator

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/simulator/socks5"
)

// tidbMySQLPort is the port TiDB serves the MySQL protocol on in its pods.
const tidbMySQLPort = 4000

// bootstrapWait bounds how long a connection to a cluster whose bootstrap
// SQL is running waits for it (TiDB accepts clients once bootstrapped).
const bootstrapWait = 30 * time.Second

// mysqlFront plays the MySQL port of every simulated TiDB: a SOCKS5 server
// (clients set ALL_PROXY=socks5://…) that forwards connections for a
// cluster's TiDB client Service, its headless peer Service or a TiDB pod
// to one real MySQL-protocol server (the backend), and refuses every other
// target. With it runs TiDB's first bootstrap: the SQL file named by
// initialize-sql-file, once per cluster.
type mysqlFront struct {
	kube      kubernetes.Interface
	backend   string
	socks     *socks5.Server
	bootstrap *bootstrapRunner
	log       klog.Logger
}

// newMySQLFront listens for SOCKS5 on listen and forwards to backend.
func newMySQLFront(kube kubernetes.Interface, namespace, listen, backend string, log klog.Logger) (*mysqlFront, error) {
	f := &mysqlFront{kube: kube, backend: backend, log: log.WithName("mysql"),
		bootstrap: newBootstrapRunner(kube, namespace, backend, log.WithName("bootstrap"))}
	s, err := socks5.Listen(listen, f.route)
	if err != nil {
		return nil, err
	}
	f.socks = s
	return f, nil
}

// start runs the bootstrap runner until ctx ends, then closes the proxy.
func (f *mysqlFront) start(ctx context.Context) error {
	if err := f.bootstrap.start(ctx); err != nil {
		_ = f.socks.Close()
		return err
	}
	go func() {
		<-ctx.Done()
		_ = f.socks.Close()
	}()
	return nil
}

// tidbTarget is a parsed TiDB address: the cluster and what was named.
type tidbTarget struct {
	namespace, cluster string
	service, pod       string // the Service named, and the pod when one was
	peer               bool
}

// parseTiDBHost reads "<tc>-tidb.<ns>", "<tc>-tidb-peer.<ns>" or
// "<pod>.<tc>-tidb-peer.<ns>", each optionally followed by ".svc" and a
// cluster domain; ok is false for any other host.
func parseTiDBHost(host string) (tidbTarget, bool) {
	host = strings.TrimSuffix(host, ".")
	if i := strings.Index(host, ".svc"); i >= 0 && (len(host) == i+4 || host[i+4] == '.') {
		host = host[:i]
	}
	parts := strings.Split(host, ".")
	var t tidbTarget
	switch len(parts) {
	case 2:
		t.service, t.namespace = parts[0], parts[1]
	case 3:
		t.pod, t.service, t.namespace = parts[0], parts[1], parts[2]
	default:
		return t, false
	}
	if tc, ok := strings.CutSuffix(t.service, "-tidb-peer"); ok && tc != "" {
		t.cluster, t.peer = tc, true
	} else if tc, ok := strings.CutSuffix(t.service, "-tidb"); ok && tc != "" && t.pod == "" {
		t.cluster = tc
	} else {
		return t, false
	}
	if t.pod != "" && !strings.HasPrefix(t.pod, t.cluster+"-tidb-") {
		return t, false
	}
	return t, t.namespace != ""
}

// route is the SOCKS5 routing: a TiDB target that exists on the API server
// with port as its MySQL port goes to the backend (once the cluster's
// bootstrap SQL, if any, has run); anything else is refused.
func (f *mysqlFront) route(host string, port int) (string, error) {
	t, ok := parseTiDBHost(host)
	if !ok {
		return "", fmt.Errorf("%s is not a TiDB address: %w", socks5.JoinTarget(host, port), socks5.ErrRefused)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bootstrapWait)
	defer cancel()
	if err := f.checkTarget(ctx, t, port); err != nil {
		f.log.V(2).Info("refused", "target", socks5.JoinTarget(host, port), "reason", err)
		return "", fmt.Errorf("%s: %w: %w", socks5.JoinTarget(host, port), err, socks5.ErrRefused)
	}
	if err := f.bootstrap.wait(ctx, t.namespace, t.cluster); err != nil {
		return "", fmt.Errorf("%s: %w", socks5.JoinTarget(host, port), err)
	}
	return f.backend, nil
}

// checkTarget reads the named pod or Service: it must exist, and port must
// be TiDB's MySQL port (pods and the headless Service: 4000; the client
// Service: a port targeting 4000).
func (f *mysqlFront) checkTarget(ctx context.Context, t tidbTarget, port int) error {
	if t.pod != "" {
		if _, err := f.kube.CoreV1().Pods(t.namespace).Get(ctx, t.pod, metav1.GetOptions{}); err != nil {
			return err
		}
		return mysqlPortIs(port, tidbMySQLPort)
	}
	svc, err := f.kube.CoreV1().Services(t.namespace).Get(ctx, t.service, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if t.peer {
		return mysqlPortIs(port, tidbMySQLPort)
	}
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == port && p.Protocol != corev1.ProtocolUDP && p.TargetPort.IntValue() == tidbMySQLPort {
			return nil
		}
	}
	return fmt.Errorf("service %s/%s has no port %d to TiDB's %d", t.namespace, t.service, port, tidbMySQLPort)
}

func mysqlPortIs(port, want int) error {
	if port != want {
		return fmt.Errorf("port %d is not TiDB's MySQL port %d", port, want)
	}
	return nil
}
