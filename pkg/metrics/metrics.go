// Package metrics owns the controller-manager's Prometheus registry and every
// metric it exports: Go and process collectors, client-go workqueue metrics,
// per-controller reconcile outcomes and durations, and per-cluster figures.
package metrics

import (
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Reconcile results, the values of the "result" label.
const (
	ResultSuccess = "success"
	ResultError   = "error"
	ResultRequeue = "requeue"
)

// Metrics is one controller-manager's set of metrics and the registry that
// serves them. Build it with New; it is safe for concurrent use.
type Metrics struct {
	registry *prometheus.Registry

	reconcileTotal   *prometheus.CounterVec
	reconcileErrors  *prometheus.CounterVec
	reconcileTime    *prometheus.HistogramVec
	maxConcurrent    *prometheus.GaugeVec
	activeWorkers    *prometheus.GaugeVec
	specReplicas     *prometheus.GaugeVec
	clusterErrors    *prometheus.CounterVec
	clusterSyncTotal *prometheus.CounterVec
}

// New builds a dedicated registry holding the Go and process collectors and
// the operator's metrics. Workqueue metrics come from the process-wide
// provider (see workqueue.go) and are served alongside.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		reconcileTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total",
			Help: "Total number of reconciliations per controller, by result (success, error, requeue).",
		}, []string{"controller", "result"}),
		reconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_errors_total",
			Help: "Total number of reconciliations per controller that ended in an error.",
		}, []string{"controller"}),
		reconcileTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "controller_runtime_reconcile_time_seconds",
			Help:    "Duration of one reconciliation per controller, in seconds.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"controller"}),
		maxConcurrent: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_max_concurrent_reconciles",
			Help: "Maximum number of concurrent reconciliations per controller (the --workers flag).",
		}, []string{"controller"}),
		activeWorkers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_active_workers",
			Help: "Number of workers currently reconciling, per controller.",
		}, []string{"controller"}),
		specReplicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tidb_operator_cluster_spec_replicas",
			Help: "Desired replicas of each component of each TidbCluster, as written in its spec.",
		}, []string{"namespace", "name", "component"}),
		clusterErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tidb_operator_cluster_update_errors_total",
			Help: "Errors met while reconciling a TidbCluster, by the component or step that failed.",
		}, []string{"namespace", "name", "component"}),
		clusterSyncTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tidb_operator_cluster_syncs_total",
			Help: "Syncs of each TidbCluster, by outcome (done, wait, error, invalid).",
		}, []string{"namespace", "name", "outcome"}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.reconcileTotal, m.reconcileErrors, m.reconcileTime, m.maxConcurrent, m.activeWorkers,
		m.specReplicas, m.clusterErrors, m.clusterSyncTotal,
	)
	return m
}

// Handler serves this registry and the process-wide workqueue metrics in the
// Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Gatherer(), promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Gatherer returns everything this controller-manager exports.
func (m *Metrics) Gatherer() prometheus.Gatherer {
	return prometheus.Gatherers{m.registry, workqueueRegistry}
}

// SetWorkers records the number of workers a controller runs with.
func (m *Metrics) SetWorkers(controller string, workers int) {
	m.maxConcurrent.WithLabelValues(controller).Set(float64(workers))
	m.activeWorkers.WithLabelValues(controller).Set(0)
}

// ObserveReconcile records one reconciliation of a controller: its duration
// and whether it succeeded, must be retried (requeue) or failed.
func (m *Metrics) ObserveReconcile(controller, result string, took time.Duration) {
	m.reconcileTotal.WithLabelValues(controller, result).Inc()
	if result == ResultError {
		m.reconcileErrors.WithLabelValues(controller).Inc()
	}
	m.reconcileTime.WithLabelValues(controller).Observe(took.Seconds())
}

// WorkerStarted and WorkerDone track how many workers are busy.
func (m *Metrics) WorkerStarted(controller string) { m.activeWorkers.WithLabelValues(controller).Inc() }

// WorkerDone marks a worker of the controller idle again.
func (m *Metrics) WorkerDone(controller string) { m.activeWorkers.WithLabelValues(controller).Dec() }

// SetSpecReplicas records a component's desired replicas for a cluster.
func (m *Metrics) SetSpecReplicas(namespace, name, component string, replicas int32) {
	m.specReplicas.WithLabelValues(namespace, name, component).Set(float64(replicas))
}

// ClusterUpdateError counts a failed step of a cluster's sync.
func (m *Metrics) ClusterUpdateError(namespace, name, component string) {
	m.clusterErrors.WithLabelValues(namespace, name, component).Inc()
}

// ClusterSynced counts one sync of a cluster by its outcome.
func (m *Metrics) ClusterSynced(namespace, name, outcome string) {
	m.clusterSyncTotal.WithLabelValues(namespace, name, outcome).Inc()
}

// ForgetCluster drops every per-cluster series of a deleted cluster so that
// the exposition does not grow with clusters that no longer exist.
func (m *Metrics) ForgetCluster(namespace, name string) {
	labels := prometheus.Labels{"namespace": namespace, "name": name}
	m.specReplicas.DeletePartialMatch(labels)
	m.clusterErrors.DeletePartialMatch(labels)
	m.clusterSyncTotal.DeletePartialMatch(labels)
}

// register adds c to reg, or returns the collector already registered under
// the same descriptors, so that two managers in one process share series.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a programming error: two different metrics under one name
	}
	return c
}
