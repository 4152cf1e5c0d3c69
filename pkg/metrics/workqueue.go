package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// workqueueRegistry holds client-go's workqueue metrics. client-go accepts one
// metrics provider per process, so the queues of every controller-manager in
// the process report here and each Metrics serves this registry too.
var workqueueRegistry = prometheus.NewRegistry()

var installOnce sync.Once

// InstallWorkqueueProvider makes client-go's workqueues report depth, adds,
// latency, work duration, unfinished work, longest-running processor and
// retries, labelled by queue name. Call it before creating queues; later
// calls do nothing.
func InstallWorkqueueProvider() {
	installOnce.Do(func() { workqueue.SetProvider(workqueueProvider{}) })
}

type workqueueProvider struct{}

func (workqueueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return vecGauge("workqueue_depth", "Current depth of the workqueue.").WithLabelValues(name)
}

func (workqueueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return vecCounter("workqueue_adds_total", "Total number of adds handled by the workqueue.").WithLabelValues(name)
}

func (workqueueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return vecHistogram("workqueue_queue_duration_seconds",
		"How long in seconds an item stays in the workqueue before being requested.").WithLabelValues(name)
}

func (workqueueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return vecHistogram("workqueue_work_duration_seconds",
		"How long in seconds processing an item from the workqueue takes.").WithLabelValues(name)
}

func (workqueueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return vecGauge("workqueue_unfinished_work_seconds",
		"How many seconds of work is in progress and not yet observed by work_duration.").WithLabelValues(name)
}

func (workqueueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return vecGauge("workqueue_longest_running_processor_seconds",
		"How many seconds the longest running processor of the workqueue has been running.").WithLabelValues(name)
}

func (workqueueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return vecCounter("workqueue_retries_total", "Total number of retries handled by the workqueue.").WithLabelValues(name)
}

func vecGauge(name, help string) *prometheus.GaugeVec {
	return register(workqueueRegistry, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"name"}))
}

func vecCounter(name, help string) *prometheus.CounterVec {
	return register(workqueueRegistry, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"name"}))
}

func vecHistogram(name, help string) *prometheus.HistogramVec {
	return register(workqueueRegistry, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: name, Help: help, Buckets: prometheus.ExponentialBuckets(1e-6, 10, 10),
	}, []string{"name"}))
}
