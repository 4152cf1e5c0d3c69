package pd

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

func v2TC(flags ...v1alpha1.StartScriptV2FeatureFlag) *v1alpha1.TidbCluster {
	tc := basicTC()
	tc.Spec.StartScriptVersion = "v2"
	tc.Spec.StartScriptV2FeatureFlags = flags
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

func renderScript(t *testing.T, tc *v1alpha1.TidbCluster) string {
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
	data, err := newConfigData(v2TC())
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "v2-script", data)
}

func TestStartScriptV2(t *testing.T) {
	t.Parallel()
	mustHave := func(t *testing.T, s string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("script lacks %q:\n%s", w, s)
			}
		}
	}
	mustLack := func(t *testing.T, s string, unwanted ...string) {
		t.Helper()
		for _, w := range unwanted {
			if strings.Contains(s, w) {
				t.Errorf("script has %q:\n%s", w, s)
			}
		}
	}
	t.Run("default waits for its name, asks discovery", func(t *testing.T) {
		s := renderScript(t, v2TC())
		mustHave(t, s, "#!/bin/sh\n", `FQDN="${POD_NAME}.basic-pd-peer.ns.svc"`, "dig +search +short",
			"-ge 30 ]", "http://basic-discovery.ns.svc:10261/new/", `"${DATA_DIR}/join"`, "--name=${POD_NAME}")
		mustLack(t, s, "hostname -I", "${PEER_SERVICE_NAME}")
	})
	t.Run("start timeout bounds the wait", func(t *testing.T) {
		tc := v2TC()
		tc.Spec.PD.StartTimeout = 90
		mustHave(t, renderScript(t, tc), "-ge 90 ]")
	})
	t.Run("WaitForDnsNameIpMatch", func(t *testing.T) {
		mustHave(t, renderScript(t, v2TC(component.FlagWaitForDNSNameIPMatch)), "hostname -I", "own_address $addrs")
	})
	t.Run("initWaitTime pauses before the address match", func(t *testing.T) {
		tc := v2TC(component.FlagWaitForDNSNameIPMatch)
		tc.Spec.PD.InitWaitTime = 15
		s := renderScript(t, tc)
		mustHave(t, s, "\nsleep 15\n")
		if strings.Index(s, "sleep 15") > strings.Index(s, "own_address $addrs") {
			t.Errorf("the pause must come before the wait:\n%s", s)
		}
	})
	t.Run("initWaitTime without the address match changes nothing", func(t *testing.T) {
		tc := v2TC()
		tc.Spec.PD.InitWaitTime = 15
		if got, want := renderScript(t, tc), renderScript(t, v2TC()); got != want {
			t.Errorf("initWaitTime changed the plain DNS wait's script")
		}
		mustLack(t, renderScript(t, v2TC(component.FlagWaitForDNSNameIPMatch)), "initWaitTime")
	})
	t.Run("NoWaitDNS", func(t *testing.T) {
		s := renderScript(t, v2TC(component.FlagNoWaitDNS, component.FlagWaitForDNSNameIPMatch))
		mustLack(t, s, "dig ", "hostname -I", "waited=")
	})
	t.Run("BashShebang", func(t *testing.T) {
		mustHave(t, renderScript(t, v2TC(component.FlagBashShebang)), "#!/bin/bash\n")
	})
	t.Run("PreferPDAddressesOverDiscovery joins pdAddresses", func(t *testing.T) {
		tc := v2TC(component.FlagPreferPDAddressesOverDiscovery)
		tc.Spec.PDAddresses = []string{"http://pd-0.other-pd-peer.other.svc:2379", "pd-1.other-pd-peer.other.svc:2379", "pd-2"}
		s := renderScript(t, tc)
		mustHave(t, s, `ARGS="${ARGS} --join=http://pd-0.other-pd-peer.other.svc:2380,http://pd-1.other-pd-peer.other.svc:2380,http://pd-2:2380"`)
		mustLack(t, s, "/new/", "/join\"")
	})
	t.Run("PreferPDAddressesOverDiscovery without pdAddresses asks discovery", func(t *testing.T) {
		mustHave(t, renderScript(t, v2TC(component.FlagPreferPDAddressesOverDiscovery)), "/new/")
	})
	t.Run("pdAddresses without the flag are discovery's business", func(t *testing.T) {
		tc := v2TC()
		tc.Spec.PDAddresses = []string{"http://pd-0.other:2379"}
		mustLack(t, renderScript(t, tc), "pd-0.other")
	})
	t.Run("TLS, cluster domain", func(t *testing.T) {
		tc := v2TC()
		tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
		tc.Spec.ClusterDomain = "east.example"
		mustHave(t, renderScript(t, tc), `"${POD_NAME}.basic-pd-peer.ns.svc.east.example"`, "--name=${FQDN}",
			"https://${FQDN}:2380", "basic-discovery.ns.svc.east.example:10261")
	})
	t.Run("an address cannot inject shell code", func(t *testing.T) {
		tc := v2TC(component.FlagPreferPDAddressesOverDiscovery)
		tc.Spec.PDAddresses = []string{"http://$(reboot)"}
		mustHave(t, renderScript(t, tc), `--join=http://\$(reboot):2380`)
	})
}

// TestStartScriptVersionSwitchIsAChange: the skeleton keeps a mounted
// ConfigMap whose script means the same (takeover); v1 → v2, and a flag
// that changes the wait, must not mean the same, so the pods roll.
func TestStartScriptVersionSwitchIsAChange(t *testing.T) {
	t.Parallel()
	v1 := basicTC()
	defaulting.SetTidbClusterDefaults(v1)
	a, _ := newConfigData(v1)
	for name, tc := range map[string]*v1alpha1.TidbCluster{
		"v2":       v2TC(),
		"ip match": v2TC(component.FlagWaitForDNSNameIPMatch),
		"no wait":  v2TC(component.FlagNoWaitDNS),
		"pd address": func() *v1alpha1.TidbCluster {
			tc := v2TC(component.FlagPreferPDAddressesOverDiscovery)
			tc.Spec.PDAddresses = []string{"pd-x"}
			return tc
		}(),
	} {
		b, _ := newConfigData(tc)
		if component.EqualConfigData(a, b) {
			t.Errorf("v1 → %s: must compare different", name)
		}
		a2, _ := newConfigData(v2TC())
		if name != "v2" && component.EqualConfigData(a2, b) {
			t.Errorf("v2 → %s: must compare different", name)
		}
	}
}

// tidbOperatorV2PD is a PD script in the layout the TiDB Operator v1.6
// renders with startScriptVersion v2 for cluster basic in ns (written for
// this test): other variable names, bash tests, its own wait loop.
const tidbOperatorV2PD = `#!/bin/sh
set -uo pipefail
source /etc/podinfo/annotations 2>/dev/null
runmode=${runmode:-normal}
if [[ X${runmode} == Xdebug ]]; then
    tail -f /dev/null
fi
MY_POD=${POD_NAME:-$HOSTNAME}
MY_DOMAIN=${MY_POD}.basic-pd-peer.ns.svc
tries=0
while true; do
    sleep 1
    tries=$(( tries+1 ))
    [[ ${tries} -ge 30 ]] && exit 1
    res=$(dig ${MY_DOMAIN} A ${MY_DOMAIN} AAAA +search +short)
    [ -n "${res}" ] && break
done
ARGS="--data-dir=/var/lib/pd \
--name=${MY_POD} \
--peer-urls=http://0.0.0.0:2380 \
--advertise-peer-urls=http://${MY_DOMAIN}:2380 \
--client-urls=http://0.0.0.0:2379 \
--advertise-client-urls=http://${MY_DOMAIN}:2379 \
--config=/etc/pd/pd.toml"
if [[ -f /var/lib/pd/join ]]; then
    join=$(cat /var/lib/pd/join | tr "," "\n" | awk -F'=' '{print $2}' | tr "\n" ",")
    join=${join%,}
    ARGS="${ARGS} --join=${join}"
elif [[ ! -d /var/lib/pd/member/wal ]]; then
    until result=$(wget -qO- -T 3 http://basic-discovery.ns:10261/new/x 2>/dev/null); do
        sleep $((RANDOM % 5))
    done
    ARGS="${ARGS} ${result}"
fi
sleep $((RANDOM % 10))
exec /pd-server ${ARGS}
`

// TestTakeoverOfAV2Cluster: the ConfigMap the TiDB Operator rendered with
// v2 compares equal to ours for the same spec, so a takeover rolls nothing.
func TestTakeoverOfAV2Cluster(t *testing.T) {
	t.Parallel()
	ours, err := newConfigData(v2TC())
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[string]string{component.ConfigFileKey: ours[component.ConfigFileKey], component.StartScriptKey: tidbOperatorV2PD}
	if !component.EqualConfigData(theirs, ours) {
		t.Fatalf("the TiDB Operator's v2 script must mean the same as ours:\n%s", ours[component.StartScriptKey])
	}
	ip, _ := newConfigData(v2TC(component.FlagWaitForDNSNameIPMatch))
	if component.EqualConfigData(theirs, ip) {
		t.Fatal("a wait that matches addresses must differ from one that only resolves")
	}
}

// TestMicroServiceModeStartsTheAPIService: with spec.pd.mode ms and
// spec.pdms PD always renders the v2 script (whatever startScriptVersion
// says), prefixed `services api`, waiting for its name to resolve to its own
// address unless NoWaitDNS; with only one of the two it runs as one service.
func TestMicroServiceModeStartsTheAPIService(t *testing.T) {
	t.Parallel()
	ms := func(flags ...v1alpha1.StartScriptV2FeatureFlag) *v1alpha1.TidbCluster {
		tc := basicTC()
		tc.Spec.PD.Mode = ModeMicroServices
		tc.Spec.PDMS = []*v1alpha1.PDMSSpec{{Name: "tso", Replicas: 1}}
		tc.Spec.StartScriptV2FeatureFlags = flags
		defaulting.SetTidbClusterDefaults(tc)
		return tc
	}
	s := renderScript(t, ms())
	if !strings.Contains(s, `ARGS="services api --data-dir=`) || !strings.Contains(s, "own_address") {
		t.Errorf("ms mode: want the API service after an address-matching DNS wait:\n%s", s)
	}
	if s := renderScript(t, ms(component.FlagNoWaitDNS)); strings.Contains(s, "own_address") || !strings.Contains(s, "services api") {
		t.Errorf("ms mode with NoWaitDNS: want no DNS wait:\n%s", s)
	}
	only := ms()
	only.Spec.PDMS = nil
	if s := renderScript(t, only); strings.Contains(s, "services api") {
		t.Errorf("mode ms without spec.pdms: PD runs as one service:\n%s", s)
	}
	if MicroServices(only) || TSOAvailable(only) != "" {
		t.Error("mode ms without spec.pdms is not micro-service mode")
	}
	tc := ms()
	if TSOAvailable(tc) == "" {
		t.Error("TiKV must wait until tso answered its health check")
	}
	tc.Status.PDMS = map[string]*v1alpha1.PDMSStatus{"tso": {Name: "tso", Healthy: true}}
	if why := TSOAvailable(tc); why != "" {
		t.Errorf("tso healthy: TiKV still waits: %s", why)
	}
}
