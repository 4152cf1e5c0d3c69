package tidbinit

import (
	"context"
	"fmt"
	"net"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
)

// sqlAddr returns where the operator reaches tc's MySQL port: the client
// Service `<tc>-tidb.<ns>.svc` on spec.tidb.service.port (4000 by default)
// when spec.tidb.service is set, else the headless `<tc>-tidb-peer.<ns>.svc`
// (which resolves to the TiDB pods) on 4000, because the operator creates
// no client Service without spec.tidb.service.
func sqlAddr(tc *v1alpha1.TidbCluster) string {
	svc := tc.Spec.TiDB.Service
	if svc == nil {
		return net.JoinHostPort(names.Peer(tc.Name, names.TiDB)+"."+tc.Namespace+".svc",
			strconv.Itoa(tidbsql.DefaultPort))
	}
	var port int32
	if svc.Port != nil {
		port = *svc.Port
	}
	return tidbsql.ServiceAddr(tc.Namespace, tc.Name, port)
}

// target returns the SQL target of tc, with TLS from Secret
// `<tc>-tidb-client-secret` when spec.tidb.tlsClient.enabled; TiDB's
// certificate is not verified (and the Secret needs no CA) when
// spec.tidb.tlsClient.skipInternalClientCA. It errors when that Secret
// cannot be read, holds no usable CA when one is needed, or an invalid
// client key pair.
func (s *Step) target(ctx context.Context, tc *v1alpha1.TidbCluster) (tidbsql.Target, error) {
	t := tidbsql.Target{Addr: sqlAddr(tc)}
	if c := tc.Spec.TiDB.TLSClient; c == nil || !c.Enabled {
		return t, nil
	}
	name := tidbsql.ClientSecretName(tc.Name)
	secret, err := s.kube.CoreV1().Secrets(tc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return t, fmt.Errorf("TiDB client TLS Secret %s/%s: %w", tc.Namespace, name, err)
	}
	t.TLS, err = tidbsql.TLSConfigFromSecretData(secret.Data, tc.Spec.TiDB.TLSClient.SkipInternalClientCA)
	if err != nil {
		return t, fmt.Errorf("TiDB client TLS Secret %s/%s: %w", tc.Namespace, name, err)
	}
	return t, nil
}
