package apply

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestCreateSecretOnceNeverReplaces: the first create writes the Secret
// controlled by the owner with an event that does not show the data; a
// second create with other data fails as AlreadyExists and leaves the
// first data in place.
func TestCreateSecretOnceNeverReplaces(t *testing.T) {
	t.Parallel()
	a, kube, _ := newFakeApplier()
	ctx := context.Background()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	secret := func(v string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "basic-init", Namespace: "ns"},
			Data: map[string][]byte{"root": []byte(v)}}
	}
	created, err := a.CreateSecret(ctx, owner, secret("first-secret-value"))
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(created); ref == nil || ref.UID != "u1" || ref.Kind != "TidbCluster" {
		t.Errorf("controller %+v, want TidbCluster basic", ref)
	}
	_, err = a.CreateSecret(ctx, owner, secret("second"))
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}
	live, err := kube.CoreV1().Secrets("ns").Get(ctx, "basic-init", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(live.Data["root"]) != "first-secret-value" {
		t.Errorf("data %q, want the first value", live.Data["root"])
	}
	events := a.recorder.(*record.FakeRecorder).Events
	for len(events) > 0 {
		e := <-events
		if strings.Contains(e, "first-secret-value") || strings.Contains(e, "second") {
			t.Errorf("event shows the data: %s", e)
		}
		if !strings.Contains(e, "Secret basic-init") {
			t.Errorf("event %q does not name the Secret", e)
		}
	}
}
