package tidb

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
	data, err := newConfigData(v2Cluster(t))
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "v2-script", data)
}

func TestStartScriptV2(t *testing.T) {
	t.Parallel()
	has := func(t *testing.T, s string, want string, yes bool) {
		t.Helper()
		if strings.Contains(s, want) != yes {
			t.Errorf("script contains %q = %v, want %v:\n%s", want, !yes, yes, s)
		}
	}
	tc := v2Cluster(t, component.FlagWaitForDNSNameIPMatch, component.FlagBashShebang)
	tc.Spec.TiDB.Plugins = []string{"audit"}
	tc.Spec.TiDB.Arguments = []string{"--log-level=warn"}
	s := v2Script(t, tc)
	has(t, s, "#!/bin/bash\n", true)
	has(t, s, `PD="basic-pd:2379"`, true)
	has(t, s, "--advertise-address=${POD_NAME}.basic-tidb-peer.ns.svc", true)
	has(t, s, "hostname", false) // TiDB's v2 script waits for no DNS name
	has(t, s, "'--plugin-load=audit' '--log-level=warn'", true)
	has(t, s, "--enable-binlog", false)

	binlog := v2Cluster(t)
	on := true
	binlog.Spec.TiDB.BinlogEnabled = &on
	has(t, v2Script(t, binlog), `ARGS="${ARGS} --enable-binlog=true"`, true)

	across := v2Cluster(t)
	across.Spec.AcrossK8s = true
	has(t, v2Script(t, across), "http://basic-discovery.ns.svc:10261/verify/", true)
}

func TestStartScriptV2IsAChange(t *testing.T) {
	t.Parallel()
	v1, _ := newConfigData(golden.Cluster(t, basicCluster))
	v2, _ := newConfigData(v2Cluster(t))
	if component.EqualConfigData(v1, v2) {
		t.Fatal("v1 → v2 must compare different (it rolls the pods)")
	}
	theirs := `#!/bin/sh
set -uo pipefail
MY_POD=${POD_NAME:-$HOSTNAME}
ARGS="--store=tikv \
--advertise-address=${MY_POD}.basic-tidb-peer.ns.svc \
--host=0.0.0.0 \
--path=basic-pd:2379 \
--config=/etc/tidb/tidb.toml"
SLOW_LOG_FILE=${SLOW_LOG_FILE:-""}
if [[ ! -z "${SLOW_LOG_FILE}" ]]; then
    ARGS="${ARGS} --log-slow-query=${SLOW_LOG_FILE:-}"
fi
exec /tidb-server ${ARGS}
`
	if !component.EqualConfigData(map[string]string{component.ConfigFileKey: v2[component.ConfigFileKey],
		component.StartScriptKey: theirs}, v2) {
		t.Fatalf("the TiDB Operator's v2 layout must mean the same as ours:\n%s", v2[component.StartScriptKey])
	}
}
