package monitor

import (
	"path"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// image is baseImage:version of c, or def for what c leaves unset.
func image(c v1alpha1.MonitorContainer, def string) string {
	base, tag, _ := strings.Cut(def, ":")
	if c.BaseImage != "" {
		base = c.BaseImage
	}
	if c.Version != "" {
		tag = c.Version
	}
	return base + ":" + tag
}

// container is the common part of every monitor container: image, pull
// policy (the container's, else spec.imagePullPolicy), resources, security.
func container(tm *v1alpha1.TidbMonitor, name string, c v1alpha1.MonitorContainer, def string) corev1.Container {
	policy := tm.Spec.ImagePullPolicy
	if c.ImagePullPolicy != nil {
		policy = *c.ImagePullPolicy
	}
	if policy == "" {
		policy = corev1.PullIfNotPresent
	}
	return corev1.Container{Name: name, Image: image(c, def), ImagePullPolicy: policy,
		Resources: c.ResourceRequirements, SecurityContext: c.SecurityContext}
}

func port(name string, p int32) corev1.ContainerPort {
	return corev1.ContainerPort{Name: name, ContainerPort: p, Protocol: corev1.ProtocolTCP}
}

func mount(name, at string, readOnly bool) corev1.VolumeMount {
	return corev1.VolumeMount{Name: name, MountPath: at, ReadOnly: readOnly}
}

func tzEnv(tm *v1alpha1.TidbMonitor) corev1.EnvVar {
	tz := tm.Spec.Timezone
	if tz == "" {
		tz = "UTC"
	}
	return corev1.EnvVar{Name: "TZ", Value: tz}
}

func sortedEnv(m map[string]string) []corev1.EnvVar {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]corev1.EnvVar, 0, len(keys))
	for _, k := range keys {
		out = append(out, corev1.EnvVar{Name: k, Value: m[k]})
	}
	return out
}

// Retention is prometheus.retentionTime, else reserveDays as "<n>d", else
// "" (Prometheus' own default).
func Retention(tm *v1alpha1.TidbMonitor) string {
	if r := tm.Spec.Prometheus.RetentionTime; r != nil && *r != "" {
		return *r
	}
	if d := tm.Spec.Prometheus.ReserveDays; d > 0 {
		return strconv.Itoa(d) + "d"
	}
	return ""
}

// initializerScript copies the dashboards and alert rules the initializer
// image carries into the volumes Grafana and Prometheus read.
const initializerScript = `set -e
mkdir -p ` + RulesDir + ` ` + DashboardsDir + `
for f in /tmp/*.rules.yml; do [ -e "$f" ] && cp -f "$f" ` + RulesDir + `/; done
for f in /tmp/*.json; do [ -e "$f" ] && cp -f "$f" ` + DashboardsDir + `/; done
echo "dashboards and rules in place"
`

// initializerContainer is pingcap/tidb-monitor-initializer:<version>
// (version: initializer.version, else alertManagerRulesVersion, else latest).
func initializerContainer(tm *v1alpha1.TidbMonitor, targets []Target) corev1.Container {
	def := DefaultInitializerBase + ":latest"
	if v := tm.Spec.AlertManagerRulesVersion; v != nil && *v != "" {
		def = DefaultInitializerBase + ":" + *v
	}
	c := container(tm, "monitor-initializer", tm.Spec.Initializer.MonitorContainer, def)
	c.Command = []string{"/bin/sh", "-c", initializerScript}
	var clusters []string
	for _, t := range targets {
		clusters = append(clusters, t.Namespace+"/"+t.Name)
	}
	c.Env = append([]corev1.EnvVar{
		{Name: "TIDB_CLUSTERS", Value: strings.Join(clusters, ",")},
		{Name: "PROM_RULES_PATH", Value: RulesDir},
		{Name: "GF_DASHBOARDS_PATH", Value: DashboardsDir},
		tzEnv(tm),
	}, sortedEnv(tm.Spec.Initializer.Envs)...)
	c.VolumeMounts = []corev1.VolumeMount{mount(rulesVolume, RulesRoot, false)}
	if tm.Spec.Grafana != nil {
		c.VolumeMounts = append(c.VolumeMounts, mount(dashboardsVolume, DashboardsRoot, false))
	}
	return c
}

// prometheusContainer runs Prometheus on :9090 with the configuration of
// shard i, the data under /data/prometheus and the retention asked.
func prometheusContainer(tm *v1alpha1.TidbMonitor, targets []Target, i, shards int32) corev1.Container {
	p := tm.Spec.Prometheus
	c := container(tm, "prometheus", p.MonitorContainer, DefaultPrometheusImage)
	key := ConfigKey(i, shards)
	if ExternalConfig(tm) != nil {
		key = ExternalConfigKey
	}
	c.Args = []string{
		"--web.enable-admin-api", "--web.enable-lifecycle",
		"--config.file=" + path.Join(ConfigDir, key),
		"--storage.tsdb.path=" + path.Join(DataDir, "prometheus"),
		"--enable-feature=expand-external-labels",
	}
	if r := Retention(tm); r != "" {
		c.Args = append(c.Args, "--storage.tsdb.retention.time="+r)
	}
	if p.LogLevel != "" {
		c.Args = append(c.Args, "--log.level="+p.LogLevel)
	}
	if tm.Spec.Thanos != nil || p.DisableCompaction {
		c.Args = append(c.Args, "--storage.tsdb.min-block-duration=2h", "--storage.tsdb.max-block-duration=2h")
	}
	if p.Config != nil {
		c.Args = append(c.Args, p.Config.CommandOptions...)
	}
	c.Ports = []corev1.ContainerPort{port("prometheus", PrometheusPort)}
	c.Env = []corev1.EnvVar{podNameEnv(), tzEnv(tm)}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/-/ready", Port: intstr.FromInt32(PrometheusPort)}}, InitialDelaySeconds: 10, TimeoutSeconds: 3}
	c.VolumeMounts = []corev1.VolumeMount{
		mount(configVolume, ConfigDir, true), mount(rulesVolume, RulesRoot, false), mount(DataVolume, DataDir, false),
	}
	if pc := p.Config; pc != nil && pc.RuleConfigRef != nil && pc.RuleConfigRef.Name != "" {
		c.VolumeMounts = append(c.VolumeMounts, mount(extRulesVolume, ExternalRulesDir, true))
	}
	for n, t := range tlsTargets(targets) {
		c.VolumeMounts = append(c.VolumeMounts, mount(tlsVolume(n), ClusterTLSPath(t), true))
	}
	c.VolumeMounts = append(c.VolumeMounts, p.AdditionalVolumeMounts...)
	return c
}

func podNameEnv() corev1.EnvVar {
	return corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}
}

// reloaderContainer watches the rules and reloads Prometheus (:9089).
func reloaderContainer(tm *v1alpha1.TidbMonitor) corev1.Container {
	c := container(tm, "reloader", tm.Spec.Reloader.MonitorContainer, DefaultReloaderImage)
	c.Command = []string{"/bin/reload",
		"--root-store-path=" + RulesRoot,
		"--rules-path=" + RulesDir,
		"--sub-store-path=" + RulesDir,
		"--watch-path=" + RulesDir,
		"--prometheus-url=http://127.0.0.1:" + strconv.Itoa(PrometheusPort),
		"--web.listen-address=:" + strconv.Itoa(ReloaderPort)}
	c.Ports = []corev1.ContainerPort{port("reloader", ReloaderPort)}
	c.Env = []corev1.EnvVar{tzEnv(tm)}
	c.VolumeMounts = []corev1.VolumeMount{mount(rulesVolume, RulesRoot, false)}
	return c
}

// configReloaderContainer reloads Prometheus when its configuration
// ConfigMap changes (a cluster gained a component, a shard moved) (:9088).
func configReloaderContainer(tm *v1alpha1.TidbMonitor) corev1.Container {
	var spec v1alpha1.MonitorContainer
	if r := tm.Spec.PrometheusReloader; r != nil {
		spec = r.MonitorContainer
	}
	c := container(tm, "prometheus-config-reloader", spec, DefaultConfigReloaderImage)
	c.Command = []string{"/bin/prometheus-config-reloader"}
	c.Args = []string{
		"--listen-address=:" + strconv.Itoa(ConfigReloaderPort),
		"--watched-dir=" + ConfigDir,
		"--reload-url=http://127.0.0.1:" + strconv.Itoa(PrometheusPort) + "/-/reload",
	}
	c.Ports = []corev1.ContainerPort{port("config-reloader", ConfigReloaderPort)}
	c.VolumeMounts = []corev1.VolumeMount{mount(configVolume, ConfigDir, true)}
	return c
}

// grafanaContainer is Grafana on :3000 with the provisioned data source and
// dashboards; the admin comes from usernameSecret/passwordSecret, else the
// username/password fields, else admin/admin.
func grafanaContainer(tm *v1alpha1.TidbMonitor) corev1.Container {
	g := tm.Spec.Grafana
	c := container(tm, "grafana", g.MonitorContainer, DefaultGrafanaImage)
	c.Ports = []corev1.ContainerPort{port("grafana", GrafanaPort)}
	c.Env = []corev1.EnvVar{
		{Name: "GF_PATHS_DATA", Value: path.Join(DataDir, "grafana")},
		{Name: "GF_PATHS_PROVISIONING", Value: ProvisioningDir},
		credential("GF_SECURITY_ADMIN_USER", g.UsernameSecret, g.Username),
		credential("GF_SECURITY_ADMIN_PASSWORD", g.PasswordSecret, g.Password),
		tzEnv(tm),
	}
	if g.LogLevel != "" {
		c.Env = append(c.Env, corev1.EnvVar{Name: "GF_LOG_LEVEL", Value: g.LogLevel})
	}
	c.Env = append(c.Env, sortedEnv(g.Envs)...)
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/api/health", Port: intstr.FromInt32(GrafanaPort)}}, TimeoutSeconds: 3}
	c.VolumeMounts = append([]corev1.VolumeMount{
		mount(grafanaVolume, ProvisioningDir, true), mount(dashboardsVolume, DashboardsRoot, true), mount(DataVolume, DataDir, false),
	}, g.AdditionalVolumeMounts...)
	return c
}

func credential(name string, secret *corev1.SecretKeySelector, literal string) corev1.EnvVar {
	if secret != nil {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: secret}}
	}
	if literal == "" {
		literal = "admin"
	}
	return corev1.EnvVar{Name: name, Value: literal}
}

// thanosPrometheusURL is this pod's Prometheus as the sidecar reaches it:
// under routePrefix when one is set (a Prometheus served below a path).
func thanosPrometheusURL(routePrefix string) string {
	u := "http://127.0.0.1:" + strconv.Itoa(PrometheusPort)
	if p := strings.Trim(path.Clean("/"+routePrefix), "/"); p != "" {
		u += "/" + p
	}
	return u
}

// thanosContainer is the Thanos sidecar (gRPC 10901, HTTP 10902) over this
// pod's Prometheus and its TSDB.
func thanosContainer(tm *v1alpha1.TidbMonitor) corev1.Container {
	t := tm.Spec.Thanos
	c := container(tm, "thanos-sidecar", t.MonitorContainer, DefaultThanosImage)
	listen := "0.0.0.0"
	if t.ListenLocal {
		listen = "127.0.0.1"
	}
	c.Args = []string{"sidecar",
		"--prometheus.url=" + thanosPrometheusURL(t.RoutePrefix),
		"--tsdb.path=" + path.Join(DataDir, "prometheus"),
		"--grpc-address=" + listen + ":" + strconv.Itoa(ThanosGRPCPort),
		"--http-address=" + listen + ":" + strconv.Itoa(ThanosHTTPPort)}
	for _, a := range []struct{ flag, v string }{{"--log.level", t.LogLevel}, {"--log.format", t.LogFormat}, {"--min-time", t.MinTime}} {
		if a.v != "" {
			c.Args = append(c.Args, a.flag+"="+a.v)
		}
	}
	switch {
	case t.ObjectStorageConfig != nil:
		c.Env = append(c.Env, corev1.EnvVar{Name: "OBJSTORE_CONFIG", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: t.ObjectStorageConfig}})
		c.Args = append(c.Args, "--objstore.config=$(OBJSTORE_CONFIG)")
	case t.ObjectStorageConfigFile != nil:
		c.Args = append(c.Args, "--objstore.config-file="+*t.ObjectStorageConfigFile)
	}
	switch {
	case t.TracingConfig != nil:
		c.Env = append(c.Env, corev1.EnvVar{Name: "TRACING_CONFIG", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: t.TracingConfig}})
		c.Args = append(c.Args, "--tracing.config=$(TRACING_CONFIG)")
	case t.TracingConfigFile != nil:
		c.Args = append(c.Args, "--tracing.config-file="+*t.TracingConfigFile)
	}
	c.Ports = []corev1.ContainerPort{port("thanos-grpc", ThanosGRPCPort), port("thanos-http", ThanosHTTPPort)}
	c.VolumeMounts = append([]corev1.VolumeMount{mount(DataVolume, DataDir, false)}, t.AdditionalVolumeMounts...)
	return c
}
