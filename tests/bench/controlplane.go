//go:build bench

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// ControlPlane is a dedicated local control plane (hack/local-cluster.sh)
// with its own state dir and ports, auditing the operator's requests.
type ControlPlane struct {
	repo     string
	stateDir string
	env      []string
	// Kubeconfig is the admin's (the harness, the simulator).
	Kubeconfig string
	// OperatorKubeconfig authenticates as OperatorUser.
	OperatorKubeconfig string
	// AuditLog is the apiserver's audit log.
	AuditLog string
	// APIServerPort is where kube-apiserver listens.
	APIServerPort int
}

// StartControlPlane brings up a control plane in stateDir on six free
// consecutive ports, with KWOK nodes room for pods pods, installs the CRDs
// and writes the operator's kubeconfig. A start that fails (a port taken
// between the check and the bind) is stopped and retried on other ports.
// Once up, the cluster is stopped by the script's watchdog if this process
// dies; call Stop otherwise.
func StartControlPlane(ctx context.Context, repo, stateDir string, pods int, logw *os.File) (*ControlPlane, error) {
	if err := os.MkdirAll(filepath.Dir(stateDir), 0o755); err != nil {
		return nil, err
	}
	policy := stateDir + ".audit-policy.yaml"
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	var errs []error
	for range 3 {
		base, err := freePortBlock()
		if err != nil {
			return nil, err
		}
		cp := newControlPlane(repo, stateDir, policy, base, pods)
		err = cp.script(ctx, logw, "up")
		if err == nil {
			return cp, cp.install(ctx, logw)
		}
		errs = append(errs, err)
		if downErr := cp.script(context.Background(), logw, "down"); downErr != nil || ctx.Err() != nil {
			return nil, errors.Join(append(errs, downErr, ctx.Err())...)
		}
	}
	return nil, errors.Join(errs...)
}

func newControlPlane(repo, stateDir, policy string, base, pods int) *ControlPlane {
	const nodes = 3
	perNode := max(1000, pods/nodes+100)
	return &ControlPlane{
		repo:     repo,
		stateDir: stateDir,
		env: []string{
			"KUBETIDB_LOCAL_DIR=" + stateDir,
			"KUBETIDB_APISERVER_PORT=" + strconv.Itoa(base),
			"KUBETIDB_ETCD_PORT=" + strconv.Itoa(base+1),
			"KUBETIDB_NODES=" + strconv.Itoa(nodes),
			"KUBETIDB_NODE_PODS=" + strconv.Itoa(perNode),
			"KUBETIDB_AUDIT_POLICY=" + policy,
			"KUBETIDB_OWNER_PID=" + strconv.Itoa(os.Getpid()),
		},
		Kubeconfig:         filepath.Join(stateDir, "kubeconfig"),
		OperatorKubeconfig: filepath.Join(stateDir, "operator.kubeconfig"),
		AuditLog:           filepath.Join(stateDir, "audit.log"),
		APIServerPort:      base,
	}
}

// install applies the CRDs, waits until they are served, and writes the
// operator's kubeconfig.
func (cp *ControlPlane) install(ctx context.Context, logw *os.File) error {
	if err := cp.kubectl(ctx, logw, "apply", "-f", filepath.Join(cp.repo, "manifests", "crd.yaml")); err != nil {
		return err
	}
	if err := cp.kubectl(ctx, logw, "wait", "--for=condition=Established", "crd", "--all", "--timeout=120s"); err != nil {
		return err
	}
	return cp.writeOperatorKubeconfig()
}

// Stop copies the control plane's logs and audit log into keep (when not
// empty) and stops it.
func (cp *ControlPlane) Stop(logw *os.File, keep string) error {
	if keep != "" {
		_ = exec.Command("cp", "-r", filepath.Join(cp.stateDir, "logs"), filepath.Join(keep, "control-plane-logs")).Run()
		_ = exec.Command("cp", cp.AuditLog, filepath.Join(keep, "audit.log")).Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return cp.script(ctx, logw, "down")
}

func (cp *ControlPlane) script(ctx context.Context, logw *os.File, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(cp.repo, "hack", "local-cluster.sh"), args...)
	cmd.Env = append(os.Environ(), cp.env...)
	cmd.Stdout, cmd.Stderr = logw, logw
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/local-cluster.sh %s (log %s): %w", strings.Join(args, " "), logw.Name(), err)
	}
	return nil
}

func (cp *ControlPlane) kubectl(ctx context.Context, logw *os.File, args ...string) error {
	out, err := exec.CommandContext(ctx, filepath.Join(cp.repo, "hack", "local-cluster.sh"), "bin-path", "kubectl").Output()
	if err != nil {
		return fmt.Errorf("find kubectl: %w", err)
	}
	cmd := exec.CommandContext(ctx, strings.TrimSpace(string(out)), append([]string{"--kubeconfig", cp.Kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = logw, logw
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// freePortBlock returns p such that 127.0.0.1 ports p..p+5 are free
// (apiserver, etcd client and peer, controller-manager, scheduler, KWOK),
// in 30000-32759: above hack/test-integration.sh's 20000-29999 and below
// Linux's ephemeral range (32768-60999), where an outgoing connection of any
// process may take a port between this check and the bind.
func freePortBlock() (int, error) {
	for range 50 {
		base := 30000 + mrand.IntN(460)*6
		ok := true
		for p := base; p < base+6 && ok; p++ {
			ok = portFree(p)
		}
		if ok {
			return base, nil
		}
	}
	return 0, errors.New("no 6 consecutive free ports in 30000-32759")
}

// writeOperatorKubeconfig signs a client certificate for CN=OperatorUser,
// O=system:masters with the cluster CA and writes the admin kubeconfig with
// that identity, so the audit log can attribute the operator's requests.
func (cp *ControlPlane) writeOperatorKubeconfig() error {
	pki := filepath.Join(cp.stateDir, "pki")
	caCert, caKey, err := loadCA(filepath.Join(pki, "ca.crt"), filepath.Join(pki, "ca.key"))
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: OperatorUser, Organization: []string{"system:masters"}},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("sign operator certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load admin kubeconfig: %w", err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.ClientCertificateData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		ai.ClientKeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	return clientcmd.WriteToFile(*cfg, cp.OperatorKubeconfig)
}

func loadCA(certPath, keyPath string) (*x509.Certificate, any, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("CA certificate or key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parse CA key: %w", err)
	}
	return cert, key, nil
}
