package backup

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestBackupStatusFor(t *testing.T) {
	t.Parallel()
	earlier := metav1.NewTime(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	invalid := func(msg string, at metav1.Time) v1alpha1.BackupCondition {
		return v1alpha1.BackupCondition{Type: v1alpha1.BackupInvalid, Status: corev1.ConditionTrue,
			Reason: ReasonInvalidSpec, Message: msg, LastTransitionTime: at}
	}
	scheduled := v1alpha1.BackupCondition{Type: v1alpha1.BackupScheduled, Status: corev1.ConditionTrue, LastTransitionTime: earlier}
	cases := []struct {
		name    string
		in      v1alpha1.BackupStatus
		message string
		want    v1alpha1.BackupStatus
	}{
		{name: "valid and never invalid stays empty"},
		{name: "turns invalid", message: "bad",
			want: v1alpha1.BackupStatus{Phase: v1alpha1.BackupInvalid, Conditions: []v1alpha1.BackupCondition{invalid("bad", now)}}},
		{name: "new message keeps the transition time",
			in:      v1alpha1.BackupStatus{Phase: v1alpha1.BackupInvalid, Conditions: []v1alpha1.BackupCondition{invalid("old", earlier)}},
			message: "new",
			want:    v1alpha1.BackupStatus{Phase: v1alpha1.BackupInvalid, Conditions: []v1alpha1.BackupCondition{invalid("new", earlier)}}},
		{name: "a False Invalid condition turning True transitions now",
			in:      v1alpha1.BackupStatus{Conditions: []v1alpha1.BackupCondition{{Type: v1alpha1.BackupInvalid, Status: corev1.ConditionFalse, LastTransitionTime: earlier}}},
			message: "bad",
			want:    v1alpha1.BackupStatus{Phase: v1alpha1.BackupInvalid, Conditions: []v1alpha1.BackupCondition{invalid("bad", now)}}},
		{name: "fixed falls back to the last True condition",
			in: v1alpha1.BackupStatus{Phase: v1alpha1.BackupInvalid, BackupPath: "p",
				Conditions: []v1alpha1.BackupCondition{scheduled, invalid("bad", earlier)}},
			want: v1alpha1.BackupStatus{Phase: v1alpha1.BackupScheduled, BackupPath: "p",
				Conditions: []v1alpha1.BackupCondition{scheduled}}},
		{name: "fixed with nothing else clears phase and conditions",
			in:   v1alpha1.BackupStatus{Phase: v1alpha1.BackupInvalid, Conditions: []v1alpha1.BackupCondition{invalid("bad", earlier)}},
			want: v1alpha1.BackupStatus{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in.DeepCopy()
			got := backupStatusFor(in, tc.message, now)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(&tc.in, in); diff != "" {
				t.Errorf("the input was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestStatusPatchTouchesOnlyPhaseAndConditions(t *testing.T) {
	t.Parallel()
	conds := []v1alpha1.RestoreCondition{{Type: v1alpha1.RestoreInvalid, Status: corev1.ConditionTrue, Message: "bad"}}
	cases := []struct {
		name      string
		hadStatus bool
		oldPhase  string
		newPhase  string
		oldConds  []v1alpha1.RestoreCondition
		newConds  []v1alpha1.RestoreCondition
		want      string
	}{
		{name: "no status yet: add it whole", newPhase: "Invalid", newConds: conds,
			want: `[{"op":"test","path":"/metadata/uid","value":"u"},{"op":"add","path":"/status","value":{"conditions":[{"type":"Invalid","status":"True","message":"bad"}],"phase":"Invalid"}}]`},
		{name: "status exists: set both fields", hadStatus: true, newPhase: "Invalid", newConds: conds,
			want: `[{"op":"test","path":"/metadata/uid","value":"u"},{"op":"add","path":"/status/phase","value":"Invalid"},{"op":"add","path":"/status/conditions","value":[{"type":"Invalid","status":"True","message":"bad"}]}]`},
		{name: "cleared: remove both fields", hadStatus: true, oldPhase: "Invalid", oldConds: conds,
			want: `[{"op":"test","path":"/metadata/uid","value":"u"},{"op":"remove","path":"/status/phase"},{"op":"remove","path":"/status/conditions"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := statusPatch("u", tc.hadStatus, tc.oldPhase, tc.newPhase, tc.oldConds, tc.newConds)
			if err != nil {
				t.Fatal(err)
			}
			// Compare decoded JSON, because the condition's zero time encodes as null.
			var gotV, wantV any
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &wantV); err != nil {
				t.Fatal(err)
			}
			stripNull(gotV)
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

// stripNull removes null values from decoded JSON objects, in place.
func stripNull(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				stripNull(e)
			}
		}
	case []any:
		for _, e := range v {
			stripNull(e)
		}
	}
}

// TestBackupUnsupportedCondition: syncBackupStatus adds the Unsupported
// condition naming the fields, keeps it (and its time) while they stay,
// drops it when they go, and never lets it become the phase, also when an
// Invalid spec turns valid again.
func TestBackupUnsupportedCondition(t *testing.T) {
	t.Parallel()
	earlier := metav1.NewTime(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	build := func(st v1alpha1.BackupStatus, msg string, at metav1.Time) []v1alpha1.BackupCondition {
		return withUnsupported(st.Conditions, msg, at,
			func(c v1alpha1.BackupCondition) string { return string(c.Type) },
			func(c v1alpha1.BackupCondition) (bool, string, metav1.Time) {
				return c.Status == corev1.ConditionTrue, c.Message, c.LastTransitionTime
			},
			func(m string, t metav1.Time) v1alpha1.BackupCondition {
				return v1alpha1.BackupCondition{Type: ConditionUnsupported, Status: corev1.ConditionTrue, Message: m, LastTransitionTime: t}
			})
	}
	st := v1alpha1.BackupStatus{Phase: v1alpha1.BackupScheduled, Conditions: []v1alpha1.BackupCondition{
		{Type: v1alpha1.BackupScheduled, Status: corev1.ConditionTrue, LastTransitionTime: earlier}}}
	st.Conditions = build(st, "useKMS", earlier)
	if len(st.Conditions) != 2 || st.Conditions[1].Type != ConditionUnsupported || st.Phase != v1alpha1.BackupScheduled {
		t.Fatalf("added: %+v", st)
	}
	if again := build(st, "useKMS", now); again[1].LastTransitionTime != earlier {
		t.Errorf("the same message moved the transition time: %+v", again[1])
	}
	if changed := build(st, "useKMS, tikvGCLifeTime", now); changed[1].LastTransitionTime != now {
		t.Errorf("a new message kept the old time: %+v", changed[1])
	}
	if gone := build(st, "", now); len(gone) != 1 || gone[0].Type != v1alpha1.BackupScheduled {
		t.Errorf("no field left: %+v", gone)
	}
	invalid := backupStatusFor(&st, "bad", now)
	if back := backupStatusFor(invalid, "", now); back.Phase != v1alpha1.BackupScheduled {
		t.Errorf("valid again: phase %q, want Scheduled (never Unsupported)", back.Phase)
	}
}
