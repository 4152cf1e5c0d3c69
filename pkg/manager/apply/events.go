package apply

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// EventBatch collects the successful writes of one cluster sync so that
// they cost one Event per verb instead of one per object: the first sync of
// a new cluster creates nine objects (discovery and PD), and an Event each
// would double the API writes of a new cluster. Failures are never batched; they are recorded at once as
// Warnings. A batch is safe for concurrent use.
type EventBatch struct {
	mu      sync.Mutex
	verbs   []string            // in order of first use
	objects map[string][]string // verb → "Kind name", in order written
}

type batchKey struct{}

// WithEventBatch returns a context whose apply calls add their successful
// writes to the returned batch instead of recording an Event each. Call
// Flush when the sync ends, whatever its outcome.
func WithEventBatch(ctx context.Context) (context.Context, *EventBatch) {
	b := &EventBatch{objects: map[string][]string{}}
	return context.WithValue(ctx, batchKey{}, b), b
}

func batchFrom(ctx context.Context) *EventBatch {
	b, _ := ctx.Value(batchKey{}).(*EventBatch)
	return b
}

func (b *EventBatch) add(verb, kind, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, seen := b.objects[verb]; !seen {
		b.verbs = append(b.verbs, verb)
	}
	b.objects[verb] = append(b.objects[verb], kind+" "+name)
}

// Flush records one Normal Successful<Verb> Event on owner per verb used,
// naming every object in the order written ("create Service db-pd, StatefulSet
// db-pd in TidbCluster db successful"; with one object the message is the TiDB
// Operator's), and empties the batch. A nil recorder only empties it.
func (b *EventBatch) Flush(rec record.EventRecorder, owner Owner) {
	b.mu.Lock()
	verbs, objects := b.verbs, b.objects
	b.verbs, b.objects = nil, map[string][]string{}
	b.mu.Unlock()
	if rec == nil {
		return
	}
	for _, verb := range verbs {
		rec.Eventf(owner, corev1.EventTypeNormal, "Successful"+verb, "%s %s in %s %s successful",
			lower(verb), strings.Join(objects[verb], ", "), ownerKind(owner).Kind, owner.GetName())
	}
}

// recordEvent records the outcome of one write: a Warning Failed<Verb> at
// once, a Normal Successful<Verb> into ctx's batch when it has one, or at
// once when it has none. The reasons are the TiDB Operator's.
func recordEvent(ctx context.Context, rec record.EventRecorder, owner Owner, verb, kind, name string, err error) {
	if rec == nil {
		return
	}
	if err != nil {
		rec.Eventf(owner, corev1.EventTypeWarning, "Failed"+verb, "%s %s %s in %s %s failed: %v",
			lower(verb), kind, name, ownerKind(owner).Kind, owner.GetName(), err)
		return
	}
	if b := batchFrom(ctx); b != nil {
		b.add(verb, kind, name)
		return
	}
	rec.Eventf(owner, corev1.EventTypeNormal, "Successful"+verb, "%s %s %s in %s %s successful",
		lower(verb), kind, name, ownerKind(owner).Kind, owner.GetName())
}

func lower(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
