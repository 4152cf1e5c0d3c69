package backupschedule

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// TestSyncRequeuesAtTheNextCronTime checks the wiring: the shell re-adds the
// key after the delay Control computed, and not before.
func TestSyncRequeuesAtTheNextCronTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c, err := NewController(f.deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	bs := newSchedule("@every 1s", epoch.Add(-500*time.Millisecond)) // next: 00:00:00
	f.seedSchedule(bs)
	if err := f.deps.InformerFactory.Pingcap().V1alpha1().BackupSchedules().Informer().GetIndexer().Add(bs); err != nil {
		t.Fatal(err)
	}
	f.deps.FakeClock.SetTime(epoch.Add(-time.Second))

	if err := c.sync(context.Background(), "ns1/bs"); err != nil {
		t.Fatal(err)
	}
	if got := f.writes(); len(got) != 0 {
		t.Fatalf("nothing due: writes %v", got)
	}
	if n := c.Worker().Len(); n != 0 {
		t.Fatalf("queue length %d right after the sync, want 0 (the key is due in 1s)", n)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return c.Worker().Len() == 1, nil })
	if err != nil {
		t.Fatalf("the key was not re-added at the next cron time: %v", err)
	}
	// A deleted schedule ends its sync without error.
	if err := c.sync(context.Background(), "ns1/gone"); err != nil {
		t.Fatal(err)
	}
}
