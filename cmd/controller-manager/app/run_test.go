package app

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

func TestEventsConfigHasItsOwnLimiter(t *testing.T) {
	shared := flowcontrol.NewTokenBucketRateLimiter(50, 100)
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", QPS: 50, Burst: 100, RateLimiter: shared, UserAgent: "tidb-controller-manager/x"}
	ev := eventsConfig(cfg)
	if ev.QPS != eventsQPS || ev.Burst != eventsBurst || ev.RateLimiter != nil {
		t.Errorf("events config QPS %v burst %d limiter %v; want %v, %d and a limiter of its own",
			ev.QPS, ev.Burst, ev.RateLimiter, float32(eventsQPS), eventsBurst)
	}
	if cfg.QPS != 50 || cfg.Burst != 100 || cfg.RateLimiter != shared {
		t.Errorf("the reconciling client's config changed: %+v", cfg)
	}
	if ev.Host != cfg.Host || ev.UserAgent != cfg.UserAgent {
		t.Errorf("events config lost the connection settings: %+v", ev)
	}
}

// TestEventSpamKeyIncludesTheReason: events of one object and type with
// different reasons fall in different spam-filter buckets, the same reason
// in the same one.
func TestEventSpamKeyIncludesTheReason(t *testing.T) {
	ev := func(reason string) *corev1.Event {
		return &corev1.Event{Reason: reason, Type: corev1.EventTypeNormal,
			InvolvedObject: corev1.ObjectReference{Kind: "TidbCluster", Namespace: "ns", Name: "basic", UID: "u"}}
	}
	if eventSpamKey(ev("PDLeaderTransferred")) == eventSpamKey(ev("RollingUpdateFinished")) {
		t.Error("different reasons share a spam-filter bucket")
	}
	first, again := ev("PDLeaderTransferred"), ev("PDLeaderTransferred")
	again.Message = "another message"
	if eventSpamKey(first) != eventSpamKey(again) {
		t.Error("the same reason must share its bucket, whatever the message")
	}
}
