package apply

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestEventBatchRecordsOneEventPerVerb(t *testing.T) {
	t.Parallel()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
	rec := record.NewFakeRecorder(10)
	ctx, batch := WithEventBatch(context.Background())

	recordEvent(ctx, rec, owner, "Create", "Service", "db-pd", nil)
	recordEvent(ctx, rec, owner, "Update", "ConfigMap", "db-pd", nil)
	recordEvent(ctx, rec, owner, "Create", "StatefulSet", "db-pd", nil)
	recordEvent(ctx, rec, owner, "Create", "Service", "db-pd-peer", errors.New("quota"))
	got := drain(rec)
	if want := []string{"Warning FailedCreate create Service db-pd-peer in TidbCluster db failed: quota"}; !slices.Equal(got, want) {
		t.Fatalf("before flush: events %q, want only the failure %q", got, want)
	}

	batch.Flush(rec, owner)
	got = drain(rec)
	want := []string{
		"Normal SuccessfulCreate create Service db-pd, StatefulSet db-pd in TidbCluster db successful",
		"Normal SuccessfulUpdate update ConfigMap db-pd in TidbCluster db successful",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("flush: events %q, want %q", got, want)
	}
	batch.Flush(rec, owner)
	if got := drain(rec); len(got) != 0 {
		t.Fatalf("second flush recorded %q, want nothing", got)
	}
}

func TestRecordEventWithoutBatchRecordsAtOnce(t *testing.T) {
	t.Parallel()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
	rec := record.NewFakeRecorder(10)
	recordEvent(context.Background(), rec, owner, "Create", "StatefulSet", "db-tikv", nil)
	want := []string{"Normal SuccessfulCreate create StatefulSet db-tikv in TidbCluster db successful"}
	if got := drain(rec); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}
