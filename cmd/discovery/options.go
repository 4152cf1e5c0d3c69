package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"
)

// Environment variables the discovery Deployment sets (spec §3.4).
const (
	envTCName        = "TC_NAME"
	envNamespace     = "MY_POD_NAMESPACE"
	envTLSEnabled    = "TC_TLS_ENABLED"
	envDiscoveryMTLS = "DISCOVERY_MTLS_ENABLED"
)

// options are the flags and environment of tidb-discovery.
type options struct {
	kubeconfig    string
	addr          string
	proxyAddr     string
	pprofAddr     string
	pdTimeout     time.Duration
	shutdownGrace time.Duration
	pdTLSDir      string
	serverTLSDir  string
	printVersion  bool

	tcName     string // TC_NAME
	namespace  string // MY_POD_NAMESPACE
	pdTLS      bool   // TC_TLS_ENABLED: present the cluster client certificate to PD
	serverMTLS bool   // DISCOVERY_MTLS_ENABLED: serve the discovery port over mutual TLS
}

// newOptions returns the flag defaults.
func newOptions() *options {
	return &options{
		addr:          ":10261",
		proxyAddr:     ":10262",
		pdTimeout:     5 * time.Second,
		shutdownGrace: 10 * time.Second,
		pdTLSDir:      "/var/lib/pd-tls",
		serverTLSDir:  "/var/lib/discovery-tls",
	}
}

// addFlags registers the flags on fs.
func (o *options) addFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.printVersion, "V", false, "Print version information and exit.")
	fs.BoolVar(&o.printVersion, "version", false, "Print version information and exit.")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig, for local runs. Default: $KUBECONFIG, else the in-cluster config.")
	fs.StringVar(&o.addr, "addr", o.addr, "Address of the discovery API (/new, /verify, /healthz).")
	fs.StringVar(&o.proxyAddr, "proxy-addr", o.proxyAddr, "Address of the PD dashboard proxy; empty disables it.")
	fs.StringVar(&o.pprofAddr, "pprof-addr", "", "Address of net/http/pprof (the TiDB Operator uses :6060); empty disables it.")
	fs.DurationVar(&o.pdTimeout, "pd-timeout", o.pdTimeout, "Timeout of each PD request.")
	fs.DurationVar(&o.shutdownGrace, "shutdown-grace-period", o.shutdownGrace, "How long requests in flight may finish after SIGTERM.")
	fs.StringVar(&o.pdTLSDir, "pd-tls-dir", o.pdTLSDir, "Directory with ca.crt, tls.crt and tls.key presented to PD when $TC_TLS_ENABLED is true.")
	fs.StringVar(&o.serverTLSDir, "discovery-tls-dir", o.serverTLSDir,
		"Directory with ca.crt, tls.crt and tls.key of the discovery port when $DISCOVERY_MTLS_ENABLED is true.")
}

// loadEnv reads the environment through getenv. TC_NAME and
// MY_POD_NAMESPACE are required; the TLS switches must be booleans if set.
func (o *options) loadEnv(getenv func(string) string) error {
	o.tcName, o.namespace = getenv(envTCName), getenv(envNamespace)
	var errs []error
	if o.tcName == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the TidbCluster name) is required", envTCName))
	}
	if o.namespace == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the discovery's namespace) is required", envNamespace))
	}
	var err error
	if o.pdTLS, err = envBool(getenv, envTLSEnabled); err != nil {
		errs = append(errs, err)
	}
	if o.serverMTLS, err = envBool(getenv, envDiscoveryMTLS); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validate checks the flags.
func (o *options) validate() error {
	if o.addr == "" {
		return errors.New("--addr must not be empty")
	}
	if o.pdTimeout <= 0 {
		return errors.New("--pd-timeout must be positive")
	}
	return nil
}

// envBool parses an optional boolean environment variable; unset is false.
func envBool(getenv func(string) string, name string) (bool, error) {
	v := getenv(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("environment variable %s=%q is not a boolean: %w", name, v, err)
	}
	return b, nil
}
