package tiflash

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Keys of TiFlash's ConfigMap and the placeholders in them. The values are
// templates: the init container of each pod replaces PodNumPlaceholder with
// the pod's ordinal and writes the results to /data0 (see initScript).
const (
	// ConfigTemplateKey holds TiFlash's own config (spec.tiflash.config.config).
	ConfigTemplateKey = "config_templ.toml"
	// ProxyTemplateKey holds the TiFlash proxy's config (spec.tiflash.config.proxy).
	ProxyTemplateKey = "proxy_templ.toml"
	// PodNumPlaceholder stands for the pod's ordinal in both templates.
	PodNumPlaceholder = "POD_NUM"
	// pdAddrPlaceholder stands for the PD endpoints when the cluster spans
	// Kubernetes clusters: the init container asks discovery for them.
	pdAddrPlaceholder = "PD_ADDR"
)

// Default log files; the log-tailer sidecars follow whatever the config says.
const (
	defaultServerLog  = "/data0/logs/server.log"
	defaultErrorLog   = "/data0/logs/error.log"
	defaultClusterLog = "/data0/logs/flash_cluster_manager.log"
)

// Keys of the log files in TiFlash's config, in sidecar order.
const (
	keyServerLog  = "logger.log"
	keyErrorLog   = "logger.errorlog"
	keyClusterLog = "flash.flash_cluster.log"
)

// tree is a parsed TOML document.
type tree = map[string]any

// newConfigData returns the two config templates: the operator's defaults
// for tc with the user's spec.tiflash.config.config and .proxy over them
// (the user wins, as in the TiDB Operator), then the TLS paths, which the
// user cannot override. TiFlash always has a ConfigMap, whether or not the
// spec has a config. Rendering is deterministic (sorted keys).
func newConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	userCommon, userProxy, err := userConfig(tc.Spec.TiFlash.Config)
	if err != nil {
		return nil, err
	}
	common := merge(commonDefaults(tc, userCommon), userCommon)
	proxy := merge(proxyDefaults(tc), userProxy)
	if err := tlsConfig(tc, common, proxy); err != nil {
		return nil, err
	}
	commonText, err := component.RenderConfig(v1alpha1.NewConfig(common), nil)
	if err != nil {
		return nil, fmt.Errorf("spec.tiflash.config.config: %w", err)
	}
	proxyText, err := component.RenderConfig(v1alpha1.NewConfig(proxy), nil)
	if err != nil {
		return nil, fmt.Errorf("spec.tiflash.config.proxy: %w", err)
	}
	return map[string]string{ConfigTemplateKey: commonText, ProxyTemplateKey: proxyText}, nil
}

// userConfig returns copies of the user's TiFlash and proxy configs:
// spec.tiflash.config holds them under "config" and "proxy", each a table
// or a TOML document in a string. Other keys are ignored (validation
// reports them).
func userConfig(cfg *v1alpha1.Config) (common, proxy tree, err error) {
	var items tree
	if cfg != nil {
		items = v1alpha1.NewConfig(cfg.Items).Items // a deep copy: merging must not touch the spec
	}
	if common, err = userSection(items, "config"); err != nil {
		return nil, nil, err
	}
	if proxy, err = userSection(items, "proxy"); err != nil {
		return nil, nil, err
	}
	return common, proxy, nil
}

func userSection(items tree, key string) (tree, error) {
	switch v := items[key].(type) {
	case nil:
		return tree{}, nil
	case map[string]any:
		return v, nil
	case string:
		t := tree{}
		if err := toml.Unmarshal([]byte(v), &t); err != nil {
			return nil, fmt.Errorf("spec.tiflash.config.%s is not valid TOML: %w", key, err)
		}
		return t, nil
	default:
		return nil, fmt.Errorf("spec.tiflash.config.%s must be a table or a TOML string, not %T", key, v)
	}
}

// commonDefaults returns the operator's defaults for TiFlash's own config.
// TiFlash 5.4 changed its config layout; older versions get the long list
// the TiDB Operator wrote for them (legacyCommonDefaults). user is read only
// for the keys whose presence replaces a default under another name.
func commonDefaults(tc *v1alpha1.TidbCluster, user tree) tree {
	version := tiflashVersion(tc)
	if !versionAtLeast(version, 5, 4) {
		return legacyCommonDefaults(tc)
	}
	d := tree{}
	// A path or storage.main.dir of the user's replaces the data directories.
	if !has(user, "path") {
		put(d, "storage.main.dir", dataDirs(tc, "db"))
	}
	if !has(user, "raft.kvstore_path") {
		put(d, "storage.raft.dir", []any{"/data0/kvstore"})
	}
	put(d, "tmp_path", "/data0/tmp")
	if !versionAtLeast(version, 7, 1) { // 7.1 dropped the ClickHouse ports
		put(d, "tcp_port", int64(TCPPort))
		put(d, "http_port", int64(HTTPPort))
	}
	setFlashDefaults(d, tc)
	put(d, keyErrorLog, defaultErrorLog)
	put(d, keyServerLog, defaultServerLog)
	put(d, "raft.pd_addr", pdAddr(tc))
	if tc.Spec.PreferIPv6 {
		put(d, "listen_host", "::") // TiFlash wants "::" here, not "[::]"
		put(d, "status.metrics_port", int64(MetricsPort))
	}
	return d
}

// setFlashDefaults sets the [flash] addresses shared by every version.
func setFlashDefaults(d tree, tc *v1alpha1.TidbCluster) {
	put(d, "flash.tidb_status_addr", tidbStatusAddr(tc))
	put(d, "flash.service_addr", hostPort(listenHost(tc), FlashPort))
	put(d, keyClusterLog, defaultClusterLog)
	put(d, "flash.proxy.addr", hostPort(listenHost(tc), ProxyPort))
	put(d, "flash.proxy.advertise-addr", hostPort(podFQDN(tc), ProxyPort))
	put(d, "flash.proxy.data-dir", "/data0/proxy")
	put(d, "flash.proxy.config", "/data0/proxy.toml")
}

// legacyCommonDefaults are the defaults for TiFlash before 5.4: the data
// directories joined in "path", the fixed settings of legacyDefaults, the
// addresses and every port (tlsConfig drops those of the other scheme).
func legacyCommonDefaults(tc *v1alpha1.TidbCluster) tree {
	d := tree{}
	dirs := make([]string, 0, len(tc.Spec.TiFlash.StorageClaims))
	for _, dir := range dataDirs(tc, "db") {
		dirs = append(dirs, dir.(string))
	}
	put(d, "path", strings.Join(dirs, ","))
	for _, kv := range legacyDefaults {
		put(d, kv.key, kv.value)
	}
	setFlashDefaults(d, tc)
	put(d, keyErrorLog, defaultErrorLog)
	put(d, keyServerLog, defaultServerLog)
	put(d, "raft.pd_addr", pdAddr(tc))
	host := "0.0.0.0"
	if tc.Spec.PreferIPv6 {
		host = "::" // TiFlash wants "::" here, not "[::]"
	}
	put(d, "listen_host", host)
	return d
}

// legacyDefaults are the fixed settings the TiDB Operator wrote for TiFlash
// before 5.4.
var legacyDefaults = []struct {
	key   string
	value any
}{
	{"tmp_path", "/data0/tmp"},
	{"display_name", "TiFlash"},
	{"default_profile", "default"},
	{"path_realtime_mode", false},
	{"mark_cache_size", int64(5368709120)},
	{"minmax_index_cache_size", int64(5368709120)},
	{"tcp_port", int64(TCPPort)},
	{"tcp_port_secure", int64(TCPPort)},
	{"http_port", int64(HTTPPort)},
	{"https_port", int64(HTTPPort)},
	{"interserver_http_port", int64(InternalPort)},
	{"flash.overlap_threshold", 0.6},
	{"flash.compact_log_min_period", int64(200)},
	{"flash.flash_cluster.cluster_manager_path", "/tiflash/flash_cluster_manager"},
	{"flash.flash_cluster.refresh_interval", int64(20)},
	{"flash.flash_cluster.update_rule_interval", int64(10)},
	{"flash.flash_cluster.master_ttl", int64(60)},
	{"logger.size", "100M"},
	{"logger.level", "information"},
	{"logger.count", int64(10)},
	{"application.runAsDaemon", true},
	{"raft.kvstore_path", "/data0/kvstore"},
	{"raft.storage_engine", "dt"},
	{"status.metrics_port", int64(MetricsPort)},
	{"quotas.default.interval.duration", int64(3600)},
	{"quotas.default.interval.queries", int64(0)},
	{"quotas.default.interval.errors", int64(0)},
	{"quotas.default.interval.result_rows", int64(0)},
	{"quotas.default.interval.read_rows", int64(0)},
	{"quotas.default.interval.execution_time", int64(0)},
	{"users.readonly.profile", "readonly"},
	{"users.readonly.quota", "default"},
	{"users.readonly.networks.ip", "::/0"},
	{"users.readonly.password", ""},
	{"users.default.profile", "default"},
	{"users.default.quota", "default"},
	{"users.default.networks.ip", "::/0"},
	{"users.default.password", ""},
	{"profiles.readonly.readonly", int64(1)},
	{"profiles.default.max_memory_usage", int64(10000000000)},
	{"profiles.default.load_balancing", "random"},
	{"profiles.default.use_uncompressed_cache", int64(0)},
}

// proxyDefaults returns the operator's defaults for the proxy's config.
func proxyDefaults(tc *v1alpha1.TidbCluster) tree {
	d := tree{}
	put(d, "log-level", "info")
	put(d, "server.engine-addr", hostPort(podFQDN(tc), FlashPort))
	put(d, "server.status-addr", hostPort(listenHost(tc), ProxyStatusPort))
	put(d, "server.advertise-status-addr", hostPort(podFQDN(tc), ProxyStatusPort))
	return d
}

// tlsConfig adjusts the merged configs to the cluster's TLS setting. With
// TLS both read the cluster certificate (TiFlash's keys use "_", the
// proxy's "-"), whatever the user wrote there; the plain ClickHouse ports
// go and, before 7.1, the secure ones replace them; the proxy inherits
// TiFlash's allowed CN unless it has its own. Without TLS, TiFlash before
// 5.4 drops the secure ports of its defaults.
func tlsConfig(tc *v1alpha1.TidbCluster, common, proxy tree) error {
	version := tiflashVersion(tc)
	if !tlsEnabled(tc) {
		if !versionAtLeast(version, 5, 4) {
			delete(common, "https_port")
			delete(common, "tcp_port_secure")
		}
		return nil
	}
	if !versionAtLeast(version, 7, 1) {
		setIfAbsent(common, "tcp_port_secure", int64(TCPPort))
		setIfAbsent(common, "https_port", int64(HTTPPort))
	}
	delete(common, "http_port")
	delete(common, "tcp_port")
	cn, inherit := lookup(common, "security.cert_allowed_cn")
	inherit = inherit && !has(proxy, "security.cert-allowed-cn")
	if err := setSecurity(common, "_", "config"); err != nil {
		return err
	}
	if err := setSecurity(proxy, "-", "proxy"); err != nil {
		return err
	}
	if inherit {
		put(proxy, "security.cert-allowed-cn", cn)
	}
	return nil
}

// setSecurity sets the certificate paths in t's [security] table, with sep
// between the words of the keys.
func setSecurity(t tree, sep, section string) error {
	if v, ok := t["security"]; ok {
		if _, table := v.(map[string]any); !table {
			return fmt.Errorf("spec.tiflash.config.%s: security must be a table, not %T", section, v)
		}
	}
	put(t, "security.ca"+sep+"path", tlsDir+"/ca.crt")
	put(t, "security.cert"+sep+"path", tlsDir+"/tls.crt")
	put(t, "security.key"+sep+"path", tlsDir+"/tls.key")
	return nil
}

// logFiles returns the files the log-tailer sidecars follow, in container
// order (serverlog, errorlog, clusterlog): the user's config, else the
// defaults.
func logFiles(tc *v1alpha1.TidbCluster) ([3]string, error) {
	common, _, err := userConfig(tc.Spec.TiFlash.Config)
	if err != nil {
		return [3]string{}, err
	}
	var out [3]string
	for i, kv := range [3][2]string{{keyServerLog, defaultServerLog}, {keyErrorLog, defaultErrorLog}, {keyClusterLog, defaultClusterLog}} {
		out[i] = kv[1]
		v, ok := lookup(common, kv[0])
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return out, fmt.Errorf("spec.tiflash.config.config: %s must be a file name, not %T", kv[0], v)
		}
		out[i] = s
	}
	return out, nil
}

// dataDirs returns "/data<i>/<sub>" for every storage claim ("/data0/<sub>"
// without claims, which validation refuses).
func dataDirs(tc *v1alpha1.TidbCluster, sub string) []any {
	n := max(len(tc.Spec.TiFlash.StorageClaims), 1)
	out := make([]any, 0, n)
	for i := range n {
		out = append(out, dataMountPath(i)+"/"+sub)
	}
	return out
}

// pdAddr returns raft.pd_addr: host:port of PD without scheme. Across
// Kubernetes clusters it is a placeholder the init container fills from
// discovery; a cluster without its own PD uses the referenced cluster's PD
// Service, else spec.pdAddresses.
func pdAddr(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.AcrossK8s {
		return pdAddrPlaceholder
	}
	if tc.Spec.PD == nil {
		if ref := tc.Spec.Cluster; ref != nil && ref.Name != "" {
			return refServiceAddr(tc, names.Member(ref.Name, names.PD), pdClientPort)
		}
		if len(tc.Spec.PDAddresses) > 0 {
			return hostsOf(tc.Spec.PDAddresses)
		}
	}
	return fmt.Sprintf("%s.%s.svc:%d", names.Member(tc.Name, names.PD), tc.Namespace, pdClientPort)
}

// tidbStatusAddr returns flash.tidb_status_addr: the TiDB Service's status
// port, the referenced cluster's TiDB (its headless Service across
// Kubernetes clusters) when this cluster has no TiDB of its own.
func tidbStatusAddr(tc *v1alpha1.TidbCluster) string {
	if ref := tc.Spec.Cluster; tc.Spec.TiDB == nil && ref != nil && ref.Name != "" {
		svc := names.Member(ref.Name, names.TiDB)
		if tc.Spec.AcrossK8s {
			svc = names.Peer(ref.Name, names.TiDB)
		}
		return refServiceAddr(tc, svc, tidbStatusPort)
	}
	return fmt.Sprintf("%s.%s.svc:%d", names.Member(tc.Name, names.TiDB), tc.Namespace, tidbStatusPort)
}

// refServiceAddr returns "<svc>.<namespace>.svc[.<domain>]:<port>" for a
// Service of the cluster spec.cluster references (its namespace defaults
// to tc's).
func refServiceAddr(tc *v1alpha1.TidbCluster, svc string, port int) string {
	ref := tc.Spec.Cluster
	ns := ref.Namespace
	if ns == "" {
		ns = tc.Namespace
	}
	return fmt.Sprintf("%s.%s.svc%s:%d", svc, ns, domainSuffix(ref.ClusterDomain), port)
}

// hostsOf returns the host:port of each URL, comma-separated.
func hostsOf(urls []string) string {
	hosts := make([]string, 0, len(urls))
	for _, u := range urls {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			hosts = append(hosts, p.Host)
		}
	}
	return strings.Join(hosts, ",")
}

func domainSuffix(domain string) string {
	if domain == "" {
		return ""
	}
	return "." + domain
}

// podFQDN is the DNS name of a TiFlash pod, with the ordinal as placeholder.
func podFQDN(tc *v1alpha1.TidbCluster) string {
	return names.PodFQDN(names.Member(tc.Name, names.TiFlash)+"-"+PodNumPlaceholder,
		names.Peer(tc.Name, names.TiFlash), tc.Namespace, tc.Spec.ClusterDomain)
}

func listenHost(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.PreferIPv6 {
		return "[::]"
	}
	return "0.0.0.0"
}

func hostPort(host string, port int) string { return host + ":" + strconv.Itoa(port) }

func tiflashVersion(tc *v1alpha1.TidbCluster) string {
	return defaulting.NewComponentAccessor(tc, defaulting.ComponentTiFlash).Version()
}

// versionAtLeast reports whether version (such as "v5.4.0") is at least
// major.minor. An unparsable version (latest, nightly, a digest) counts as
// new, as for TiKV.
func versionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	ma, err := strconv.Atoi(parts[0])
	if err != nil {
		return true
	}
	mi := 0
	if len(parts) > 1 {
		digits := strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
		if mi, err = strconv.Atoi(digits); err != nil {
			return true
		}
	}
	return ma > major || ma == major && mi >= minor
}

// merge puts src over dst, table by table, and returns dst.
func merge(dst, src tree) tree {
	for k, v := range src {
		if dt, ok := dst[k].(map[string]any); ok {
			if st, ok := v.(map[string]any); ok {
				merge(dt, st)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// put sets the dotted key in t, creating tables (t is the operator's own
// tree, so a key never crosses a non-table).
func put(t tree, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := t[p].(map[string]any)
		if !ok {
			next = tree{}
			t[p] = next
		}
		t = next
	}
	t[parts[len(parts)-1]] = v
}

// setIfAbsent sets a top-level key unless it is present.
func setIfAbsent(t tree, key string, v any) {
	if _, ok := t[key]; !ok {
		t[key] = v
	}
}

// lookup returns the value at the dotted key.
func lookup(t tree, key string) (any, bool) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := t[p].(map[string]any)
		if !ok {
			return nil, false
		}
		t = next
	}
	v, ok := t[parts[len(parts)-1]]
	return v, ok
}

func has(t tree, key string) bool {
	_, ok := lookup(t, key)
	return ok
}
