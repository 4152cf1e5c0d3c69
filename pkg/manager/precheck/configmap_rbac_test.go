package precheck

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func configMap(mut func(*corev1.ConfigMap)) metav1.Object {
	cm := validConfigMap()
	mut(cm)
	return cm
}

func role(mut func(*rbacv1.Role)) metav1.Object {
	r := validRole()
	mut(r)
	return r
}

func binding(mut func(*rbacv1.RoleBinding)) metav1.Object {
	b := validRoleBinding()
	mut(b)
	return b
}

func TestConfigMapRules(t *testing.T) {
	t.Parallel()
	cmP := "ConfigMap[basic-tikv-364be9a]"
	runRuleCases(t, []ruleCase{
		{"bad key", configMap(func(cm *corev1.ConfigMap) { cm.Data["tikv.toml "] = "" }),
			[]string{cmP + ".data[tikv.toml ]: Invalid value"}},
		{"key with slash", configMap(func(cm *corev1.ConfigMap) { cm.Data["conf/tikv.toml"] = "" }),
			[]string{cmP + ".data[conf/tikv.toml]: Invalid value"}},
		{"binary key", configMap(func(cm *corev1.ConfigMap) { cm.BinaryData[".."] = nil }),
			[]string{cmP + ".binaryData[..]: Invalid value"}},
		{"key in both", configMap(func(cm *corev1.ConfigMap) { cm.BinaryData["config-file"] = nil }),
			[]string{cmP + ".binaryData[config-file]: Invalid value"}},
		{"too large", configMap(func(cm *corev1.ConfigMap) { cm.Data["big"] = strings.Repeat("x", 1<<20) }),
			[]string{cmP + ".data: Too long"}},
		{"exactly 1 MiB", configMap(func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"big": strings.Repeat("x", 1<<20)}
			cm.BinaryData = nil
		}), nil},
	})
}

func TestRBACRules(t *testing.T) {
	t.Parallel()
	roleP, bindP := "Role[basic-discovery]", "RoleBinding[basic-discovery]"
	runRuleCases(t, []ruleCase{
		{"role name with slash", role(func(r *rbacv1.Role) { r.Name = "a/b" }),
			[]string{"Role[a/b].metadata.name: Invalid value"}},
		{"rule without verbs", role(func(r *rbacv1.Role) { r.Rules[0].Verbs = nil }),
			[]string{roleP + ".rules[0].verbs: Required value"}},
		{"rule without api groups", role(func(r *rbacv1.Role) { r.Rules[1].APIGroups = nil }),
			[]string{roleP + ".rules[1].apiGroups: Required value"}},
		{"rule without resources", role(func(r *rbacv1.Role) { r.Rules[1].Resources = nil }),
			[]string{roleP + ".rules[1].resources: Required value"}},
		{"non-resource URL in a role", role(func(r *rbacv1.Role) {
			r.Rules[1] = rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}
		}),
			[]string{roleP + ".rules[1].nonResourceURLs: Invalid value"}},
		{"roleRef kind", binding(func(b *rbacv1.RoleBinding) { b.RoleRef.Kind = "Roles" }),
			[]string{bindP + ".roleRef.kind: Unsupported value"}},
		{"roleRef kind missing", binding(func(b *rbacv1.RoleBinding) { b.RoleRef.Kind = "" }),
			[]string{bindP + ".roleRef.kind: Required value"}},
		{"roleRef name missing", binding(func(b *rbacv1.RoleBinding) { b.RoleRef.Name = "" }),
			[]string{bindP + ".roleRef.name: Required value"}},
		{"roleRef api group", binding(func(b *rbacv1.RoleBinding) { b.RoleRef.APIGroup = "" }),
			[]string{bindP + ".roleRef.apiGroup: Unsupported value"}},
		{"subject kind", binding(func(b *rbacv1.RoleBinding) { b.Subjects[0].Kind = "Pod" }),
			[]string{bindP + ".subjects[0].kind: Unsupported value"}},
		{"subject without name", binding(func(b *rbacv1.RoleBinding) { b.Subjects[0].Name = "" }),
			[]string{bindP + ".subjects[0].name: Required value"}},
		{"service account subject name", binding(func(b *rbacv1.RoleBinding) { b.Subjects[0].Name = "Basic_Discovery" }),
			[]string{bindP + ".subjects[0].name: Invalid value"}},
		{"service account subject api group", binding(func(b *rbacv1.RoleBinding) { b.Subjects[0].APIGroup = rbacv1.GroupName }),
			[]string{bindP + ".subjects[0].apiGroup: Unsupported value"}},
		{"group subject api group", binding(func(b *rbacv1.RoleBinding) { b.Subjects[1].APIGroup = "" }),
			[]string{bindP + ".subjects[1].apiGroup: Unsupported value"}},
		{"service account name", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "basic discovery"}},
			[]string{"ServiceAccount[basic discovery].metadata.name: Invalid value"}},
	})
}
