package precheck

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMetadataRules(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{"missing name", sts(func(s *appsv1.StatefulSet) { s.Name = "" }),
			[]string{"StatefulSet[].metadata.name: Required value"}},
		{"statefulset name with a dot", sts(func(s *appsv1.StatefulSet) { s.Name = "basic.tikv" }),
			[]string{"StatefulSet[basic.tikv].metadata.name: Invalid value"}},
		{"statefulset name over 52 characters", sts(func(s *appsv1.StatefulSet) { s.Name = strings.Repeat("a", 53) }),
			[]string{"StatefulSet[" + strings.Repeat("a", 53) + "].metadata.name: Invalid value"}},
		{"statefulset name of 52 characters", sts(func(s *appsv1.StatefulSet) { s.Name = strings.Repeat("a", 52) }), nil},
		{"service name must be a DNS-1035 label", svc(func(s *corev1.Service) { s.Name = "1tidb" }),
			[]string{"Service[1tidb].metadata.name: Invalid value"}},
		{"configmap name may be a subdomain", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a.b-c"}}, nil},
		{"configmap name upper case", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Basic"}},
			[]string{"ConfigMap[Basic].metadata.name: Invalid value"}},
		{"bad namespace", sts(func(s *appsv1.StatefulSet) { s.Namespace = "ns_1" }),
			[]string{stsP + ".metadata.namespace: Invalid value"}},
		{"illegal label key", sts(func(s *appsv1.StatefulSet) { s.Labels["bad key"] = "v" }),
			[]string{stsP + ".metadata.labels[bad key]: Invalid value"}},
		{"illegal label value", sts(func(s *appsv1.StatefulSet) { s.Labels["team"] = "a b" }),
			[]string{stsP + ".metadata.labels[team]: Invalid value"}},
		{"label value too long", sts(func(s *appsv1.StatefulSet) { s.Labels["team"] = strings.Repeat("x", 64) }),
			[]string{stsP + ".metadata.labels[team]: Invalid value"}},
		{"errors in key order", sts(func(s *appsv1.StatefulSet) { s.Labels["z z"] = ""; s.Labels["a b"] = "" }),
			[]string{stsP + ".metadata.labels[a b]: Invalid value", stsP + ".metadata.labels[z z]: Invalid value"}},
		{"illegal annotation key", sts(func(s *appsv1.StatefulSet) { s.Annotations["a/b/c"] = "" }),
			[]string{stsP + ".metadata.annotations[a/b/c]: Invalid value"}},
		{"upper-case annotation key is fine", sts(func(s *appsv1.StatefulSet) { s.Annotations["Example.com/Owner"] = "x" }), nil},
		{"annotations too large", sts(func(s *appsv1.StatefulSet) { s.Annotations["big"] = strings.Repeat("x", 256*1024) }),
			[]string{stsP + ".metadata.annotations: Too long"}},
		{"pod template label", pod(func(*corev1.PodSpec) {}), nil},
		{"bad pod template annotation", sts(func(s *appsv1.StatefulSet) { s.Spec.Template.Annotations["-x"] = "" }),
			[]string{stsP + ".spec.template.metadata.annotations[-x]: Invalid value"}},
		{"bad owner reference", sts(func(s *appsv1.StatefulSet) {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "pingcap.com/v1alpha1", Kind: "TidbCluster", UID: "u"}}
		}), []string{stsP + ".metadata.ownerReferences.name: Invalid value"}},
	})
}
