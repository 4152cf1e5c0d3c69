//go:build integration

package badinput

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
)

// result is what became of one case: its create, then what the operator
// made of it. problem, when set, fails the case.
type result struct {
	c        corpus.Case
	name     string
	createMS int64
	uid      types.UID
	rejected string // the API server's message when the create failed
	outcome  corpus.Outcome
	done     bool
	problem  string
	seen     string // the last thing observed, for a case never resolved
	// updated: the update of an update case was sent; before holds the
	// versions of the objects written for it until then (ownedVersions).
	updated bool
	before  map[string]string
}

// names reports whether msg names r's field (and r.c.Also when set).
func (r *result) names(msg string) bool {
	named := corpus.Names(msg, r.c.Field) || corpus.NamesBuilt(msg, r.c.Built)
	return named && (r.c.Also == "" || strings.Contains(msg, r.c.Also))
}

// fieldNames says what a message must name, for a failure.
func (r *result) fieldNames() string {
	s := r.c.Field
	if r.c.Built != "" {
		s += " (or the built " + r.c.Built + ")"
	}
	if r.c.Also != "" {
		s += " with " + strconv.Quote(r.c.Also)
	}
	return s
}

// resolveRejected records the outcome of a failed create.
func (r *result) resolveRejected() {
	r.done, r.outcome = true, corpus.Rejected
	switch {
	case r.c.Expect != corpus.Either && r.c.Expect != corpus.Rejected:
		r.problem = fmt.Sprintf("expected %s, but the API server rejected it: %s", r.c.Expect, r.rejected)
	case !r.names(r.rejected):
		r.problem = fmt.Sprintf("rejected without naming %s: %s", r.fieldNames(), r.rejected)
	}
}

// snapshot is one poll: the accepted objects by kind/name and the
// namespace's events by kind/name.
type snapshot struct {
	objects map[string]*unstructured.Unstructured
	events  map[string][]corev1.Event
}

func key(kind, name string) string { return kind + "/" + name }

// observe moves r on from what s shows; it is called on every poll until
// r is done.
func (r *result) observe(s *snapshot) {
	kind := corpus.KindOf(r.c)
	obj := s.objects[key(kind, r.name)]
	if obj == nil {
		r.seen = "the object is not listed"
		return
	}
	events := s.events[key(kind, r.name)]
	warning := findEvent(events, corev1.EventTypeWarning, "FailedValidation")
	switch kind {
	case "TidbCluster":
		r.observeCluster(obj, warning)
	case "BackupSchedule":
		r.observeSchedule(events, warning)
	case "Backup", "Restore":
		r.observeBackup(obj, events, warning)
	default:
		r.observeWorkload(obj, events, warning)
	}
}

// observeWorkload resolves a TidbMonitor, TidbDashboard, TidbNGMonitoring,
// TidbInitializer or DMCluster case. Invalid: a condition and the Warning
// FailedValidation event name the field. Reported (a missing TidbCluster,
// Secret or ConfigMap): a Warning event of another reason and a condition
// both match Report. Either way nothing may be written for it
// (checkWrites, by owner reference).
func (r *result) observeWorkload(obj *unstructured.Unstructured, events []corev1.Event, warning *corev1.Event) {
	r.seen = fmt.Sprintf("conditions %v; %d events", conditionSummary(obj), len(events))
	if r.c.Expect == corpus.Reported {
		report := regexp.MustCompile(r.c.Report)
		var event *corev1.Event
		for i := range events {
			if e := &events[i]; e.Type == corev1.EventTypeWarning && e.Reason != "FailedValidation" && report.MatchString(e.Message) {
				event = e
			}
		}
		if warning != nil {
			r.done, r.problem = true, "reported invalid instead of reported: "+warning.Message
			return
		}
		for _, c := range conditions(obj) {
			if msg, _ := c["message"].(string); event != nil && report.MatchString(msg) {
				r.done, r.outcome = true, corpus.Reported
				return
			}
		}
		return
	}
	if warning == nil {
		return
	}
	for _, c := range conditions(obj) {
		if msg, _ := c["message"].(string); c["status"] == "True" || c["status"] == "False" {
			if r.names(msg) {
				r.finishInvalid(warning)
				return
			}
		}
	}
	r.seen = "FailedValidation event, but no condition names " + r.fieldNames() + ": " + r.seen
}

func (r *result) observeCluster(obj *unstructured.Unstructured, warning *corev1.Event) {
	gen, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if gen != obj.GetGeneration() {
		r.seen = fmt.Sprintf("not synced yet (observedGeneration %d of %d)", gen, obj.GetGeneration())
		return
	}
	degraded := condition(obj, "Degraded")
	invalid := degraded != nil && degraded["status"] == "True" && degraded["reason"] == "InvalidSpec"
	r.seen = fmt.Sprintf("conditions %v", conditionSummary(obj))
	switch r.c.Expect {
	case corpus.Valid:
		r.done, r.outcome = true, corpus.Valid
		if invalid {
			r.problem = fmt.Sprintf("a valid spec was reported invalid: %v", degraded["message"])
		}
		return
	case corpus.Reported:
		if invalid {
			r.done, r.problem = true, fmt.Sprintf("reported invalid instead of built: %v", degraded["message"])
			return
		}
		report := regexp.MustCompile(r.c.Report)
		for _, c := range conditions(obj) {
			if msg, _ := c["message"].(string); report.MatchString(msg) {
				r.done, r.outcome = true, corpus.Reported
				return
			}
		}
		return
	}
	if !invalid {
		r.done = true
		r.problem = "accepted, but the operator did not report it invalid: " + r.seen
		return
	}
	if msg, _ := degraded["message"].(string); !r.names(msg) {
		r.done, r.problem = true, fmt.Sprintf("Degraded InvalidSpec does not name %s: %s", r.fieldNames(), msg)
		return
	}
	r.finishInvalid(warning)
}

func (r *result) observeBackup(obj *unstructured.Unstructured, events []corev1.Event, warning *corev1.Event) {
	r.seen = fmt.Sprintf("conditions %v", conditionSummary(obj))
	if e := findEvent(events, corev1.EventTypeNormal, "Accepted"); e != nil {
		r.done, r.problem = true, "accepted as valid by the operator: "+e.Message
		return
	}
	c := condition(obj, "Invalid")
	if c == nil || c["status"] != "True" {
		return
	}
	if msg, _ := c["message"].(string); !r.names(msg) {
		r.done, r.problem = true, fmt.Sprintf("Invalid condition does not name %s: %s", r.fieldNames(), msg)
		return
	}
	r.finishInvalid(warning)
}

func (r *result) observeSchedule(events []corev1.Event, warning *corev1.Event) {
	r.seen = fmt.Sprintf("%d events", len(events))
	if e := findEvent(events, corev1.EventTypeNormal, "Accepted"); e != nil {
		r.done, r.problem = true, "accepted as valid by the operator: "+e.Message
		return
	}
	if warning != nil {
		r.finishInvalid(warning)
	}
}

// finishInvalid completes an accepted case the operator reported invalid
// once its Warning event, naming the field, is listed.
func (r *result) finishInvalid(warning *corev1.Event) {
	if warning == nil {
		r.seen = "invalid, waiting for the FailedValidation event"
		return
	}
	r.done, r.outcome = true, corpus.Invalid
	switch {
	case !r.names(warning.Message):
		r.problem = fmt.Sprintf("the FailedValidation event does not name %s: %s", r.fieldNames(), warning.Message)
	case r.c.Expect != corpus.Either && r.c.Expect != corpus.Invalid:
		r.problem = fmt.Sprintf("expected %s, but it was accepted and reported invalid: %s", r.c.Expect, warning.Message)
	}
}

func findEvent(events []corev1.Event, typ, reason string) *corev1.Event {
	for i := range events {
		if events[i].Type == typ && events[i].Reason == reason {
			return &events[i]
		}
	}
	return nil
}

func conditions(obj *unstructured.Unstructured) []map[string]any {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := make([]map[string]any, 0, len(list))
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func condition(obj *unstructured.Unstructured, typ string) map[string]any {
	for _, c := range conditions(obj) {
		if c["type"] == typ {
			return c
		}
	}
	return nil
}

func conditionSummary(obj *unstructured.Unstructured) []string {
	var out []string
	for _, c := range conditions(obj) {
		out = append(out, fmt.Sprintf("%v=%v/%v: %v", c["type"], c["status"], c["reason"], c["message"]))
	}
	return out
}
