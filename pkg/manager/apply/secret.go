package apply

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateSecret creates desired, controlled by owner, and never updates or
// replaces an existing Secret: the Secrets the operator writes hold
// credentials it generated once (the random root password), which must
// survive any later sync unchanged. It records SuccessfulCreate (batched
// per sync) or a Warning FailedCreate event naming the Secret, never its
// data. It returns the created Secret; a Secret that already exists is an
// error satisfying apierrors.IsAlreadyExists, so the caller reads and uses
// it instead.
func (a *Applier) CreateSecret(ctx context.Context, owner Owner, desired *corev1.Secret) (*corev1.Secret, error) {
	setOwner(desired, owner)
	created, err := a.kube.CoreV1().Secrets(desired.Namespace).Create(ctx, desired, metav1.CreateOptions{})
	recordEvent(ctx, a.recorder, owner, "Create", "Secret", desired.Name, err)
	if err != nil {
		return nil, fmt.Errorf("create Secret %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	return created, nil
}
