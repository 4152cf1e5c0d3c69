package tidbmonitor

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Event and condition reasons of a reference the monitor's pods need that
// does not exist.
const (
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonConfigMapNotFound = "ConfigMapNotFound"
)

// RecheckDelay is how often a missing Secret or ConfigMap is looked for
// again: the operator watches neither (only the objects it labels).
const RecheckDelay = 15 * time.Second

// secretRef is one Secret key the monitor's pods read, by the spec field
// that names it.
type secretRef struct {
	path string
	ref  *corev1.SecretKeySelector
}

// missingReference reads (uncached: they are the user's) the Secrets and
// ConfigMaps tm's pods would mount or read: grafana's usernameSecret and
// passwordSecret, thanos' objectStorageConfig and prometheus'
// config.configMapRef and ruleConfigRef. It returns the reason and
// message of the first that is missing (or, for a Secret key not marked
// optional, lacks the key); "" when all exist; an error when one could
// not be read. A pod would otherwise be written and never start
// (CreateContainerConfigError).
func (c *Control) missingReference(ctx context.Context, tm *v1alpha1.TidbMonitor) (string, string, error) {
	var refs []secretRef
	if g := tm.Spec.Grafana; g != nil {
		refs = append(refs, secretRef{"spec.grafana.usernameSecret", g.UsernameSecret},
			secretRef{"spec.grafana.passwordSecret", g.PasswordSecret})
	}
	if th := tm.Spec.Thanos; th != nil {
		refs = append(refs, secretRef{"spec.thanos.objectStorageConfig", th.ObjectStorageConfig})
	}
	for _, r := range refs {
		if r.ref == nil || r.ref.Name == "" || (r.ref.Optional != nil && *r.ref.Optional) {
			continue
		}
		s, err := c.kube.CoreV1().Secrets(tm.Namespace).Get(ctx, r.ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return ReasonSecretNotFound, fmt.Sprintf("%s: Secret %s/%s not found", r.path, tm.Namespace, r.ref.Name), nil
		case err != nil:
			return "", "", fmt.Errorf("get Secret %s/%s: %w", tm.Namespace, r.ref.Name, err)
		}
		if _, ok := s.Data[r.ref.Key]; !ok {
			return ReasonSecretNotFound, fmt.Sprintf("%s: Secret %s/%s has no key %s", r.path, tm.Namespace, r.ref.Name, r.ref.Key), nil
		}
	}
	for _, r := range configMapRefs(tm) {
		_, err := c.kube.CoreV1().ConfigMaps(tm.Namespace).Get(ctx, r.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return ReasonConfigMapNotFound, fmt.Sprintf("%s: ConfigMap %s/%s not found", r.path, tm.Namespace, r.name), nil
		case err != nil:
			return "", "", fmt.Errorf("get ConfigMap %s/%s: %w", tm.Namespace, r.name, err)
		}
	}
	return "", "", nil
}

// configMapRef is one ConfigMap of the monitor's namespace the Prometheus
// pod mounts, by the spec field that names it.
type configMapRef struct{ path, name string }

// configMapRefs lists prometheus.config's configMapRef and ruleConfigRef
// when they name a ConfigMap of tm's namespace (another namespace is
// reported Unsupported instead).
func configMapRefs(tm *v1alpha1.TidbMonitor) []configMapRef {
	pc := tm.Spec.Prometheus.Config
	if pc == nil {
		return nil
	}
	var out []configMapRef
	for _, r := range []struct {
		path string
		ref  *v1alpha1.ConfigMapRef
	}{{"spec.prometheus.config.configMapRef", pc.ConfigMapRef}, {"spec.prometheus.config.ruleConfigRef", pc.RuleConfigRef}} {
		if r.ref != nil && r.ref.Name != "" && (r.ref.Namespace == nil || *r.ref.Namespace == "" || *r.ref.Namespace == tm.Namespace) {
			out = append(out, configMapRef{r.path, r.ref.Name})
		}
	}
	return out
}
