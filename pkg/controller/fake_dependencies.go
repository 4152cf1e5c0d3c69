package controller

import (
	"time"

	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
	"github.com/kubetidb/tidb-operator/pkg/client/informers/externalversions"
	"github.com/kubetidb/tidb-operator/pkg/metrics"
)

// FakeDependencies is a Dependencies over client-go fakes for unit tests:
// tests seed objects into the informers' indexers and the fake clientsets,
// and inspect the clientsets' recorded actions and the recorder's events.
type FakeDependencies struct {
	*Dependencies
	FakeKube     *kubefake.Clientset
	FakePingcap  *fake.Clientset
	FakeRecorder *record.FakeRecorder
	FakeClock    *clocktesting.FakeClock
}

// NewFakeDependencies returns dependencies backed by empty fake clientsets,
// informer factories without resync, a recorder buffering 100 events and a
// fake clock. Nothing is started: tests add objects to the indexers directly.
func NewFakeDependencies() *FakeDependencies {
	cfg := DefaultCLIConfig()
	cfg.Namespace = "tidb-admin"
	kube := kubefake.NewClientset()
	pc := fake.NewSimpleClientset()
	kubeFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	jobFactory := kubeinformers.NewSharedInformerFactory(kube, 0)
	pcFactory := externalversions.NewSharedInformerFactory(pc, 0)
	recorder := record.NewFakeRecorder(100)
	deps := newDependencies(cfg, kube, pc, kubeFactory, jobFactory, pcFactory, recorder, metrics.New())
	clk := clocktesting.NewFakeClock(fakeEpoch)
	deps.Clock = clk
	return &FakeDependencies{Dependencies: deps, FakeKube: kube, FakePingcap: pc, FakeRecorder: recorder, FakeClock: clk}
}

// fakeEpoch is the fake clock's start: a fixed instant keeps tests repeatable.
var fakeEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
