package tikv

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

func v2Cluster(t *testing.T, flags ...v1alpha1.StartScriptV2FeatureFlag) *v1alpha1.TidbCluster {
	tc := golden.Cluster(t, basicCluster)
	tc.Spec.StartScriptVersion = "v2"
	tc.Spec.StartScriptV2FeatureFlags = flags
	return tc
}

// v2Script renders tc's start script and checks that sh and bash parse it.
func v2Script(t *testing.T, tc *v1alpha1.TidbCluster) string {
	t.Helper()
	data, err := newConfigData(tc)
	if err != nil {
		t.Fatal(err)
	}
	s := data[component.StartScriptKey]
	for _, shell := range []string{"sh", "bash"} {
		if out, err := exec.Command(shell, "-n", "-c", s).CombinedOutput(); err != nil {
			t.Fatalf("%s -n: %v\n%s\n%s", shell, err, out, s)
		}
	}
	return s
}

func TestStartScriptV2Golden(t *testing.T) {
	t.Parallel()
	data, err := newConfigData(v2Cluster(t, component.FlagWaitForDNSNameIPMatch))
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "v2-script-ip-match", data)
}

func TestStartScriptV2(t *testing.T) {
	t.Parallel()
	has := func(t *testing.T, s string, want string, yes bool) {
		t.Helper()
		if strings.Contains(s, want) != yes {
			t.Errorf("script contains %q = %v, want %v:\n%s", want, !yes, yes, s)
		}
	}
	s := v2Script(t, v2Cluster(t))
	has(t, s, `PD="basic-pd:2379"`, true)
	has(t, s, `FQDN="${POD_NAME}.basic-tikv-peer.ns.svc"`, true)
	has(t, s, "--advertise-status-addr=${FQDN}:20180", true)
	has(t, s, "getent", false) // v2 TiKV waits only to match addresses
	has(t, s, "${HEADLESS_SERVICE_NAME}", false)

	ip := v2Script(t, v2Cluster(t, component.FlagWaitForDNSNameIPMatch))
	has(t, ip, "getent ahosts", true)
	has(t, ip, "hostname -I", true)
	noWait := v2Script(t, v2Cluster(t, component.FlagWaitForDNSNameIPMatch, component.FlagNoWaitDNS))
	has(t, noWait, "getent", false)

	tls := v2Cluster(t)
	tls.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	has(t, v2Script(t, tls), `PD="basic-pd:2379"`, true) // no scheme in v2

	across := v2Cluster(t)
	across.Spec.AcrossK8s = true
	across.Spec.ClusterDomain = "east.example"
	a := v2Script(t, across)
	has(t, a, "http://basic-discovery.ns.svc.east.example:10261/verify/", true)
	has(t, a, `FQDN="${POD_NAME}.basic-tikv-peer.ns.svc.east.example"`, true)

	hetero := v2Cluster(t)
	hetero.Spec.PD = nil
	hetero.Spec.Cluster = &v1alpha1.TidbClusterRef{Name: "main"}
	has(t, v2Script(t, hetero), `PD="main-pd:2379"`, true)
}

func TestStartScriptV2IsAChange(t *testing.T) {
	t.Parallel()
	v1, _ := newConfigData(golden.Cluster(t, basicCluster))
	v2, _ := newConfigData(v2Cluster(t))
	ip, _ := newConfigData(v2Cluster(t, component.FlagWaitForDNSNameIPMatch))
	if component.EqualConfigData(v1, v2) || component.EqualConfigData(v2, ip) {
		t.Fatal("v1 → v2 and v2 → v2 with WaitForDnsNameIpMatch must compare different (they roll the pods)")
	}
}

// TestTakeoverOfAV2Cluster: a TiKV script in the layout the TiDB Operator
// renders with v2 (written for this test) means the same as ours.
func TestTakeoverOfAV2Cluster(t *testing.T) {
	t.Parallel()
	theirs := `#!/bin/sh
set -uo pipefail
source /etc/podinfo/annotations 2>/dev/null
MY_POD=${POD_NAME:-$HOSTNAME}
ARGS="--pd=basic-pd:2379 \
--advertise-addr=${MY_POD}.basic-tikv-peer.ns.svc:20160 \
--addr=0.0.0.0:20160 \
--status-addr=0.0.0.0:20180 \
--data-dir=/var/lib/tikv \
--capacity=${CAPACITY} \
--config=/etc/tikv/tikv.toml"
ARGS="${ARGS} --advertise-status-addr=${MY_POD}.basic-tikv-peer.ns.svc:20180"
if [ ! -z "${STORE_LABELS:-}" ]; then
  LABELS="--labels ${STORE_LABELS} "
  ARGS="${ARGS}${LABELS}"
fi
exec /tikv-server ${ARGS}
`
	ours, _ := newConfigData(v2Cluster(t))
	if !component.EqualConfigData(map[string]string{component.ConfigFileKey: ours[component.ConfigFileKey],
		component.StartScriptKey: theirs}, ours) {
		t.Fatalf("must mean the same as ours:\n%s", ours[component.StartScriptKey])
	}
}
