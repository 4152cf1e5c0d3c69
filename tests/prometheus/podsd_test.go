//go:build integration

package prometheus

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Debian's prometheus package is built without Kubernetes service
// discovery (its promtool and prometheus reject kubernetes_sd_configs). The
// one stand-in of these tests is podSD: an HTTP service discovery endpoint
// (http_sd_configs, which Debian's build has) that lists the pods of
// ?namespace= from the real API server with the target and __meta_kubernetes_pod_*
// labels Prometheus' own Kubernetes discovery gives a pod (role: pod, one
// target per container port, podIP alone for a pod without ports). Every
// relabelling step of the generated configuration then runs in the real
// Prometheus on the same labels it would see in a cluster.

// startPodSD serves the stand-in on 127.0.0.1 until the test ends and
// returns its URL.
func startPodSD(t *testing.T, kube kubernetes.Interface) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ns := r.URL.Query().Get("namespace")
		pods, err := kube.CoreV1().Pods(ns).List(r.Context(), metav1.ListOptions{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		groups := []targetGroup{}
		for i := range pods.Items {
			groups = append(groups, podTargets(&pods.Items[i])...)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(groups)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// targetGroup is one element of an HTTP SD answer.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// podTargets are the targets Kubernetes discovery (role pod) makes of pod;
// a pod without an IP yet has none.
func podTargets(pod *corev1.Pod) []targetGroup {
	if pod.Status.PodIP == "" {
		return nil
	}
	base := map[string]string{
		"__meta_kubernetes_namespace":     pod.Namespace,
		"__meta_kubernetes_pod_name":      pod.Name,
		"__meta_kubernetes_pod_ip":        pod.Status.PodIP,
		"__meta_kubernetes_pod_uid":       string(pod.UID),
		"__meta_kubernetes_pod_phase":     string(pod.Status.Phase),
		"__meta_kubernetes_pod_node_name": pod.Spec.NodeName,
		"__meta_kubernetes_pod_ready":     strconv.FormatBool(podReady(pod)),
		"__meta_kubernetes_pod_host_ip":   pod.Status.HostIP,
	}
	for k, v := range pod.Labels {
		base["__meta_kubernetes_pod_label_"+sanitizeLabel(k)] = v
		base["__meta_kubernetes_pod_labelpresent_"+sanitizeLabel(k)] = "true"
	}
	for k, v := range pod.Annotations {
		base["__meta_kubernetes_pod_annotation_"+sanitizeLabel(k)] = v
		base["__meta_kubernetes_pod_annotationpresent_"+sanitizeLabel(k)] = "true"
	}
	var out []targetGroup
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			l := copyLabels(base)
			l["__meta_kubernetes_pod_container_name"] = c.Name
			l["__meta_kubernetes_pod_container_port_name"] = p.Name
			l["__meta_kubernetes_pod_container_port_number"] = strconv.Itoa(int(p.ContainerPort))
			l["__meta_kubernetes_pod_container_port_protocol"] = string(p.Protocol)
			out = append(out, targetGroup{Targets: []string{net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(p.ContainerPort)))}, Labels: l})
		}
	}
	if len(out) == 0 {
		out = append(out, targetGroup{Targets: []string{pod.Status.PodIP}, Labels: base})
	}
	return out
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sanitizeLabel replaces what Prometheus replaces in discovered label names.
func sanitizeLabel(s string) string {
	b := []byte(s)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	return string(b)
}
