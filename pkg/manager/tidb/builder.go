package tidb

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// TiDB's ports, paths and file names, as the TiDB Operator lays them out.
const (
	// ServerPort serves the MySQL protocol.
	ServerPort = 4000
	// StatusPort serves TiDB's status API (/status) and Prometheus metrics.
	StatusPort = 10080

	tlsDir             = "/var/lib/tidb-tls"
	tlsVolume          = "tidb-tls"
	serverTLSDir       = "/var/lib/tidb-server-tls"
	serverTLSVolume    = "tidb-server-tls"
	configDir          = "/etc/tidb"
	configFile         = "tidb.toml"
	scriptFile         = "tidb_start_script.sh"
	slowLogVolume      = "slowlog"
	slowLogDir         = "/var/log/tidb"
	slowLogFileName    = "slowlog"
	containerTiDB      = "tidb"
	containerSlowLog   = "slowlog"
	portMySQL          = "mysql-client"
	portServer         = "server"
	portStatus         = "status"
	pluginDir          = "/plugins"
	defaultHelperImage = "busybox:1.26.2"
)

func tlsEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled
}

func tlsClientEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.TiDB.TLSClient != nil && tc.Spec.TiDB.TLSClient.Enabled
}

// serverSecretName is "<tc>-tidb-server-secret", the certificate TiDB
// presents to MySQL clients when spec.tidb.tlsClient is enabled.
func serverSecretName(tc string) string { return names.Member(tc, names.TiDB) + "-server-secret" }

// newServices returns the headless <tc>-tidb-peer and, only when
// spec.tidb.service is set, the client Service <tc>-tidb.
func newServices(tc *v1alpha1.TidbCluster) []*corev1.Service {
	peer := component.HeadlessService(tc, names.TiDB, names.Peer(tc.Name, names.TiDB),
		component.Port(portStatus, StatusPort))
	if tc.Spec.TiDB.Service == nil {
		return []*corev1.Service{peer}
	}
	return []*corev1.Service{newClientService(tc), peer}
}

// newClientService returns <tc>-tidb: the MySQL port (service.port, 4000 by
// default, to the pods' 4000), the status port unless exposeStatus=false,
// then the additional ports. Node ports apply only to NodePort and
// LoadBalancer Services, as does externalTrafficPolicy, which the API server
// rejects on a ClusterIP Service.
func newClientService(tc *v1alpha1.TidbCluster) *corev1.Service {
	spec := tc.Spec.TiDB.Service
	port := int32(ServerPort)
	if spec.Port != nil && *spec.Port > 0 {
		port = *spec.Port
	}
	ports := []corev1.ServicePort{{Name: portMySQL, Port: port, TargetPort: intstr.FromInt32(ServerPort), Protocol: corev1.ProtocolTCP}}
	if spec.ExposeStatus == nil || *spec.ExposeStatus {
		ports = append(ports, component.Port(portStatus, StatusPort))
	}
	svc := component.ClientService(tc, names.TiDB, names.Member(tc.Name, names.TiDB), &spec.ServiceSpec, ports...)
	external := svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if external {
		if spec.MySQLNodePort != nil && *spec.MySQLNodePort > 0 {
			svc.Spec.Ports[0].NodePort = int32(*spec.MySQLNodePort) //nolint:gosec // validated to 0-65535 by the CRD schema and validation
		}
		if spec.StatusNodePort != nil && *spec.StatusNodePort > 0 && len(ports) > 1 {
			svc.Spec.Ports[1].NodePort = int32(*spec.StatusNodePort) //nolint:gosec // validated to 0-65535 by the CRD schema and validation
		}
		if spec.ExternalTrafficPolicy != nil {
			svc.Spec.ExternalTrafficPolicy = *spec.ExternalTrafficPolicy
		}
	}
	for _, p := range spec.AdditionalPorts {
		svc.Spec.Ports = append(svc.Spec.Ports, *p.DeepCopy())
	}
	return svc
}

// newConfigData returns the config file and start script, or nil when the
// spec has no config (clusters without spec.tidb.config predate
// operator-managed ConfigMaps, as for PD) and no bootstrap SQL, which only
// the config file can name.
func newConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	db := tc.Spec.TiDB
	bootstrap := bootstrapSQLConfigMap(tc) != ""
	if db.Config == nil && !bootstrap {
		return nil, nil
	}
	forced := map[string]any{}
	if bootstrap {
		forced[InitializeSQLFileKey] = bootstrapSQLFile
	}
	if tlsEnabled(tc) {
		forced["security.cluster-ssl-ca"] = tlsDir + "/ca.crt"
		forced["security.cluster-ssl-cert"] = tlsDir + "/tls.crt"
		forced["security.cluster-ssl-key"] = tlsDir + "/tls.key"
	}
	if tlsClientEnabled(tc) {
		// Without client authentication TiDB must not ask for client certificates.
		if !db.TLSClient.DisableClientAuthn {
			forced["security.ssl-ca"] = serverTLSDir + "/ca.crt"
		}
		forced["security.ssl-cert"] = serverTLSDir + "/tls.crt"
		forced["security.ssl-key"] = serverTLSDir + "/tls.key"
	}
	if tokenAuthEnabled(tc) {
		forced[AuthTokenJWKSConfigKey] = authTokenDir + "/" + authTokenJWKSKey
	}
	cfg, err := component.RenderConfig(db.Config, forced)
	if err != nil {
		return nil, err
	}
	script, err := startScripts.Render(tc)
	if err != nil {
		return nil, err
	}
	return map[string]string{component.ConfigFileKey: cfg, component.StartScriptKey: script}, nil
}
