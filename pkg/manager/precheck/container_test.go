package precheck

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestContainerRules(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{"nameless additional container", pod(func(p *corev1.PodSpec) {
			p.Containers = append(p.Containers, corev1.Container{Image: "busybox"})
		}), []string{podP + ".containers[2].name: Required value"}},
		{"container name not a label", ctr(func(c *corev1.Container) { c.Name = "TiKV" }),
			[]string{ctrP + ".name: Invalid value"}},
		{"duplicate name across init and regular", pod(func(p *corev1.PodSpec) { p.Containers[1].Name = "init" }),
			[]string{podP + ".containers[1].name: Duplicate value"}},
		{"no image", ctr(func(c *corev1.Container) { c.Image = "" }), []string{ctrP + ".image: Required value"}},
		{"image with whitespace", ctr(func(c *corev1.Container) { c.Image = " pingcap/tikv " }),
			[]string{ctrP + ".image: Invalid value"}},
		{"init container image", pod(func(p *corev1.PodSpec) { p.InitContainers[0].Image = "" }),
			[]string{podP + ".initContainers[0].image: Required value"}},
		{"pull policy", ctr(func(c *corev1.Container) { c.ImagePullPolicy = "Sometimes" }),
			[]string{ctrP + ".imagePullPolicy: Unsupported value"}},
		{"container port 0", ctr(func(c *corev1.Container) { c.Ports[0].ContainerPort = 0 }),
			[]string{ctrP + ".ports[0].containerPort: Required value"}},
		{"host port out of range", ctr(func(c *corev1.Container) { c.Ports[0].HostPort = 70000 }),
			[]string{ctrP + ".ports[0].hostPort: Invalid value"}},
		{"port protocol", ctr(func(c *corev1.Container) { c.Ports[1].Protocol = "tcp" }),
			[]string{ctrP + ".ports[1].protocol: Unsupported value"}},
		{"port name too long", ctr(func(c *corev1.Container) { c.Ports[0].Name = "tikv-server-port" }),
			[]string{ctrP + ".ports[0].name: Invalid value"}},
		{"duplicate port name", ctr(func(c *corev1.Container) { c.Ports[1].Name = "server" }),
			[]string{ctrP + ".ports[1].name: Duplicate value"}},
		{"duplicate host port in pod", pod(func(p *corev1.PodSpec) {
			p.Containers[0].Ports[0].HostPort = 20160
			p.Containers[1].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 20160}}
		}), []string{podP + ".containers[1].ports[0].hostPort: Duplicate value"}},
		{"host network needs equal ports", pod(func(p *corev1.PodSpec) { p.HostNetwork = true; p.Containers[0].Ports[0].HostPort = 1234 }),
			[]string{podP + ".containers[0].ports[0].containerPort: Invalid value"}},
		{"env name with '='", ctr(func(c *corev1.Container) { c.Env[1].Name = "A=B" }),
			[]string{ctrP + ".env[1].name: Invalid value"}},
		{"env name empty", ctr(func(c *corev1.Container) { c.Env[1].Name = "" }),
			[]string{ctrP + ".env[1].name: Required value"}},
		{"env value and valueFrom", ctr(func(c *corev1.Container) { c.Env[0].Value = "x" }),
			[]string{ctrP + ".env[0].valueFrom: Invalid value"}},
		{"env valueFrom empty", ctr(func(c *corev1.Container) { c.Env[0].ValueFrom = &corev1.EnvVarSource{} }),
			[]string{ctrP + ".env[0].valueFrom: Invalid value"}},
		{"env valueFrom two sources", ctr(func(c *corev1.Container) {
			c.Env[0].ValueFrom.ResourceFieldRef = &corev1.ResourceFieldSelector{Resource: "limits.cpu"}
		}), []string{ctrP + ".env[0].valueFrom: Invalid value"}},
		{"env fieldPath", ctr(func(c *corev1.Container) { c.Env[0].ValueFrom.FieldRef.FieldPath = "" }),
			[]string{ctrP + ".env[0].valueFrom.fieldRef.fieldPath: Required value"}},
		{"env secret key", ctr(func(c *corev1.Container) { c.Env[4].ValueFrom.SecretKeyRef.Key = "pass word" }),
			[]string{ctrP + ".env[4].valueFrom.secretKeyRef.key: Invalid value"}},
		{"envFrom prefix", ctr(func(c *corev1.Container) { c.EnvFrom[0].Prefix = "CFG=" }),
			[]string{ctrP + ".envFrom[0].prefix: Invalid value"}},
		{"envFrom without source", ctr(func(c *corev1.Container) { c.EnvFrom[0].ConfigMapRef = nil }),
			[]string{ctrP + ".envFrom[0]: Invalid value"}},
		{"envFrom without name", ctr(func(c *corev1.Container) { c.EnvFrom[0].ConfigMapRef.Name = "" }),
			[]string{ctrP + ".envFrom[0].configMapRef.name: Required value"}},
		{"negative request", ctr(func(c *corev1.Container) { c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("-1") }),
			[]string{ctrP + ".resources.requests[cpu]: Invalid value"}},
		{"request above limit", ctr(func(c *corev1.Container) { c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("4Gi") }),
			[]string{ctrP + ".resources.requests[memory]: Invalid value"}},
		{"unknown native resource", ctr(func(c *corev1.Container) { c.Resources.Limits["gpu"] = resource.MustParse("1") }),
			[]string{ctrP + ".resources.limits[gpu]: Invalid value"}},
		{"extended resource without limit", ctr(func(c *corev1.Container) { delete(c.Resources.Limits, "example.com/gpu") }),
			[]string{ctrP + ".resources.requests[example.com/gpu]: Forbidden"}},
		{"hugepages request below limit", ctr(func(c *corev1.Container) {
			c.Resources.Requests["hugepages-2Mi"] = resource.MustParse("2Mi")
			c.Resources.Limits["hugepages-2Mi"] = resource.MustParse("4Mi")
		}), []string{ctrP + ".resources.requests[hugepages-2Mi]: Invalid value"}},
		{"mount of unknown volume", ctr(func(c *corev1.Container) { c.VolumeMounts[1].Name = "conf" }),
			[]string{ctrP + ".volumeMounts[1].name: Not found"}},
		{"mount of a claim template", ctr(func(c *corev1.Container) { c.VolumeMounts = c.VolumeMounts[:1] }), nil},
		{"mount without path", ctr(func(c *corev1.Container) { c.VolumeMounts[1].MountPath = "" }),
			[]string{ctrP + ".volumeMounts[1].mountPath: Required value"}},
		{"duplicate mount path", ctr(func(c *corev1.Container) { c.VolumeMounts[1].MountPath = "/var/lib/tikv" }),
			[]string{ctrP + ".volumeMounts[1].mountPath: Invalid value"}},
		{"subPath escapes", ctr(func(c *corev1.Container) { c.VolumeMounts[2].SubPath = "scripts/../../etc" }),
			[]string{ctrP + ".volumeMounts[2].subPath: Invalid value"}},
		{"subPath absolute", ctr(func(c *corev1.Container) { c.VolumeMounts[2].SubPath = "/scripts" }),
			[]string{ctrP + ".volumeMounts[2].subPath: Invalid value"}},
		{"subPath and subPathExpr", ctr(func(c *corev1.Container) { c.VolumeMounts[2].SubPathExpr = "$(POD_NAME)" }),
			[]string{ctrP + ".volumeMounts[2].subPathExpr: Invalid value"}},
		{"mount propagation", ctr(func(c *corev1.Container) {
			c.VolumeMounts[0].MountPropagation = ptr.To(corev1.MountPropagationMode("Shared"))
		}),
			[]string{ctrP + ".volumeMounts[0].mountPropagation: Unsupported value"}},
		{"probe without handler", ctr(func(c *corev1.Container) { c.ReadinessProbe.TCPSocket = nil }),
			[]string{ctrP + ".readinessProbe: Required value"}},
		{"probe port name", ctr(func(c *corev1.Container) { c.ReadinessProbe.TCPSocket.Port = intstr.FromString("Server") }),
			[]string{ctrP + ".readinessProbe.tcpSocket.port: Invalid value"}},
		{"liveness success threshold", ctr(func(c *corev1.Container) { c.LivenessProbe.SuccessThreshold = 2 }),
			[]string{ctrP + ".livenessProbe.successThreshold: Invalid value"}},
		{"negative probe delay", ctr(func(c *corev1.Container) { c.ReadinessProbe.InitialDelaySeconds = -1 }),
			[]string{ctrP + ".readinessProbe.initialDelaySeconds: Invalid value"}},
		{"lifecycle with two handlers", ctr(func(c *corev1.Container) { c.Lifecycle.PreStop.Sleep = &corev1.SleepAction{Seconds: 1} }),
			[]string{ctrP + ".lifecycle.preStop: Forbidden"}},
		{"container runAsUser", ctr(func(c *corev1.Container) { c.SecurityContext.RunAsUser = ptr.To[int64](-1) }),
			[]string{ctrP + ".securityContext.runAsUser: Invalid value"}},
		{"privileged without escalation", ctr(func(c *corev1.Container) { c.SecurityContext.Privileged = ptr.To(true) }),
			[]string{ctrP + ".securityContext.allowPrivilegeEscalation: Invalid value"}},
		{"SYS_ADMIN without escalation", ctr(func(c *corev1.Container) {
			c.SecurityContext.Capabilities.Add = append(c.SecurityContext.Capabilities.Add, "SYS_ADMIN")
		}), []string{ctrP + ".securityContext.allowPrivilegeEscalation: Invalid value"}},
		{"proc mount", ctr(func(c *corev1.Container) { c.SecurityContext.ProcMount = ptr.To(corev1.ProcMountType("Masked")) }),
			[]string{ctrP + ".securityContext.procMount: Unsupported value"}},
		{"termination message policy", ctr(func(c *corev1.Container) { c.TerminationMessagePolicy = "Stdout" }),
			[]string{ctrP + ".terminationMessagePolicy: Unsupported value"}},
		{"sidecar restart policy", pod(func(p *corev1.PodSpec) {
			p.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicy("Sometimes"))
		}), []string{podP + ".initContainers[0].restartPolicy: Unsupported value"}},
		{"long env value is fine", ctr(func(c *corev1.Container) { c.Env[1].Value = strings.Repeat("x", 10000) }), nil},
	})
}

func TestHugeQuantityIsRejectedQuickly(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{"huge request", ctr(func(c *corev1.Container) { c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1e99999999") }),
			[]string{ctrP + ".resources.requests[cpu]: Invalid value"}},
		{"huge storage", sts(func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("-1e99999999")
		}), []string{stsP + ".spec.volumeClaimTemplates[0].spec.resources.requests[storage]: Invalid value"}},
	})
}
