package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/discovery"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/version"
)

// run serves the discovery API, the PD proxy and, if asked, pprof until ctx
// is done, then shuts them down gracefully. It returns an error when the
// clients or TLS material cannot be loaded, an address cannot be bound, or a
// server fails.
func run(ctx context.Context, o *options) error {
	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	pc, err := versioned.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build pingcap.com client: %w", err)
	}
	clusters := discovery.ClusterGetterFunc(func(ctx context.Context, ns, name string) (*v1alpha1.TidbCluster, error) {
		return pc.PingcapV1alpha1().TidbClusters(ns).Get(ctx, name, metav1.GetOptions{})
	})
	pdTLS, err := o.pdClientTLS()
	if err != nil {
		return err
	}
	serverTLS, err := o.serverTLS()
	if err != nil {
		return err
	}
	transport := pdapi.NewTransport(pdTLS)
	// One http.Client for every PD URL, so that plain connections are pooled.
	pdHTTP := &http.Client{Timeout: o.pdTimeout, Transport: transport}
	pdClient := func(url string) discovery.MembersGetter { return pdapi.NewClientWithHTTP(url, pdHTTP) }
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build Kubernetes client: %w", err)
	}
	d := discovery.New(o.namespace, o.tcName, clusters, pdClient).WithDM(dmClusters(pc), dmClients(kc, o.pdTimeout))

	specs := []serverSpec{{name: "discovery", addr: o.addr, handler: discovery.NewHandler(d), tls: serverTLS}}
	if o.proxyAddr != "" {
		specs = append(specs, serverSpec{name: "pd-proxy", addr: o.proxyAddr,
			handler: discovery.NewClusterPDProxy(clusters, o.namespace, o.tcName, transport)})
	}
	if o.pprofAddr != "" {
		specs = append(specs, serverSpec{name: "pprof", addr: o.pprofAddr, handler: pprofMux()})
	}
	klog.FromContext(ctx).Info("starting tidb-discovery", "version", version.Get().GitVersion,
		"pdTLS", o.pdTLS, "discoveryMTLS", o.serverMTLS)
	return serve(ctx, specs, o.shutdownGrace)
}

// dmClusters reads DMClusters live through pc, for /new/{b64}/dm.
func dmClusters(pc versioned.Interface) discovery.DMClusterGetterFunc {
	return func(ctx context.Context, ns, name string) (*v1alpha1.DMCluster, error) {
		return pc.PingcapV1alpha1().DMClusters(ns).Get(ctx, name, metav1.GetOptions{})
	}
}

// dmClients returns cached dm-master clients bounded by timeout; a TLS
// DMCluster's client presents Secret <dc>-dm-client-secret, read through kc
// (the DM discovery Role grants get on Secrets).
func dmClients(kc kubernetes.Interface, timeout time.Duration) discovery.DMClientFunc {
	secret := func(ctx context.Context, ns, name string) (map[string][]byte, error) {
		s, err := kc.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get Secret %s/%s: %w", ns, name, err)
		}
		return s.Data, nil
	}
	ctl := dmapi.NewControl(dmapi.SecretTLS(secret), timeout)
	return func(ns, dcName string, tlsEnabled bool) discovery.MastersGetter {
		return ctl.GetClient(ns, dcName, dmapi.Options{TLSEnabled: tlsEnabled})
	}
}

// serverSpec is one listener of the process.
type serverSpec struct {
	name    string
	addr    string
	handler http.Handler
	tls     *tls.Config // serve HTTPS with it when non-nil
}

// serve binds every address first, so a port in use fails the start at
// once, then serves until ctx is done or a server fails, and shuts every
// server down, letting requests in flight finish within grace.
func serve(ctx context.Context, specs []serverSpec, grace time.Duration) error {
	logger := klog.FromContext(ctx)
	servers, lns, err := listen(ctx, specs)
	if err != nil {
		return err
	}
	errCh := make(chan error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logger.Info("serving", "server", specs[i].name, "addr", lns[i].Addr().String(), "tls", specs[i].tls != nil)
			if err := srv.Serve(lns[i]); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errCh <- fmt.Errorf("%s server on %s: %w", specs[i].name, specs[i].addr, err)
			}
		}()
	}

	var runErr error
	select {
	case <-ctx.Done():
		logger.Info("shutting down", "grace", grace)
	case runErr = <-errCh:
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(shutdownCtx)
	}
	wg.Wait()
	return runErr
}

// listen binds the address of every spec and builds its server. Requests
// keep ctx's logger but not its cancellation: SIGTERM must not abort the
// requests that graceful shutdown lets finish.
func listen(ctx context.Context, specs []serverSpec) ([]*http.Server, []net.Listener, error) {
	reqCtx := context.WithoutCancel(ctx)
	var (
		servers []*http.Server
		lns     []net.Listener
	)
	for _, s := range specs {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			closeAll(lns)
			return nil, nil, fmt.Errorf("listen for %s on %s: %w", s.name, s.addr, err)
		}
		if s.tls != nil {
			ln = tls.NewListener(ln, s.tls)
		}
		lns = append(lns, ln)
		servers = append(servers, &http.Server{
			Handler:           s.handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       90 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return reqCtx },
			ErrorLog:          klog.NewStandardLogger("INFO"), // e.g. TLS handshakes refused by mTLS
		})
	}
	return servers, lns, nil
}

// closeAll closes listeners bound before a later bind failed.
func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		_ = ln.Close()
	}
}

// pprofMux serves net/http/pprof under /debug/pprof/.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// restConfig builds the client config from --kubeconfig, else $KUBECONFIG,
// else the in-cluster service account.
func restConfig(kubeconfig string) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	switch {
	case kubeconfig != "":
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	case os.Getenv("KUBECONFIG") != "":
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	default:
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("load Kubernetes client config: %w", err)
	}
	cfg.UserAgent = "tidb-discovery/" + version.Get().GitVersion
	return cfg, nil
}
