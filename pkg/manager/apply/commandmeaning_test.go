package apply

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func sh(script string, args ...string) corev1.Container {
	return corev1.Container{Command: append([]string{"sh", "-c", script}, args...)}
}

// Our TiFlash init script and the one the TiDB Operator v1.6 renders for
// the same cluster (spec §3.4).
const (
	ourTiFlashInit = `set -eu
ordinal=${POD_NAME##*-}
case "${ordinal}" in
  ''|*[!0-9]*) echo "pod name ${POD_NAME} has no ordinal" >&2; exit 1 ;;
esac
sed "s/POD_NUM/${ordinal}/g" /etc/tiflash/config_templ.toml > /data0/config.toml
sed "s/POD_NUM/${ordinal}/g" /etc/tiflash/proxy_templ.toml > /data0/proxy.toml
`
	v1TiFlashInit = "set -ex;ordinal=`echo ${POD_NAME} | awk -F- '{print $NF}'`;" +
		"sed s/POD_NUM/${ordinal}/g /etc/tiflash/config_templ.toml > /data0/config.toml;" +
		"sed s/POD_NUM/${ordinal}/g /etc/tiflash/proxy_templ.toml > /data0/proxy.toml"
	ourTailer = `touch "$1"; exec tail -n0 -F "$1"`
	ourCDC    = `exec /cdc server \
  --addr=0.0.0.0:8301 \
  --advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc:8301 \
  --gc-ttl=86400 \
  --log-file='/dev/stderr' \
  --log-level='info' \
  --pd='http://basic-pd:2379'
`
	v1CDC = "/cdc server --addr=0.0.0.0:8301 --advertise-addr=${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc:8301 " +
		"--gc-ttl=86400 --log-file=/dev/stderr --log-level=info --pd=http://basic-pd:2379"
	ourPump = `set -u
if [ ! -e "$ANNOTATIONS" ]; then
  exit 1
fi
term=
/pump \
  -pd-urls='http://basic-pd:2379' \
  -L='info' \
  -advertise-addr=${HOSTNAME}.basic-pump:8250 \
  -config=/etc/pump/pump.toml \
  -data-dir=/data \
  -log-file= &
pump=$!
trap 'term=1; kill -TERM "$pump" 2>/dev/null' TERM INT
wait "$pump"
exec tail -f /dev/null
`
	v1Pump = "set -euo pipefail\n\n/pump \\\n-pd-urls=http://basic-pd:2379 \\\n-L=info \\\n" +
		"-advertise-addr=`echo ${HOSTNAME}`.basic-pump:8250 \\\n-config=/etc/pump/pump.toml \\\n-data-dir=/data \\\n-log-file=\n\n" +
		"if [ $? == 0 ]; then\n    echo $(date -u +\"[%Y/%m/%d %H:%M:%S.%3N %:z]\") \"pump offline, please delete my pod\"\n" +
		"    tail -f /dev/null\nfi"
)

func TestSameCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		live, desired corev1.Container
		want          bool
	}{
		{"equal argv", corev1.Container{Command: []string{"/bin/sh", "/x.sh"}}, corev1.Container{Command: []string{"/bin/sh", "/x.sh"}}, true},
		{"script file vs other file", corev1.Container{Command: []string{"/bin/sh", "/x.sh"}}, corev1.Container{Command: []string{"/bin/sh", "/y.sh"}}, false},
		{"v1 log tailer", sh("touch /data0/logs/server.log; tail -n0 -F /data0/logs/server.log;"),
			sh(ourTailer, "serverlog", "/data0/logs/server.log"), true},
		{"log tailer of another file", sh("touch /data0/logs/error.log; tail -n0 -F /data0/logs/error.log;"),
			sh(ourTailer, "serverlog", "/data0/logs/server.log"), false},
		{"log tailer that does not follow", sh("touch /data0/logs/server.log; tail -n0 /data0/logs/server.log;"),
			sh(ourTailer, "serverlog", "/data0/logs/server.log"), false},
		{"v1 TiFlash init", sh(v1TiFlashInit), sh(ourTiFlashInit), true},
		{"init rendering another file", sh(v1TiFlashInit), sh(ourTiFlashInit[:len(ourTiFlashInit)-len("proxy.toml\n")] + "proxy2.toml\n"), false},
		{"init with another placeholder", sh(v1TiFlashInit), sh(strings.ReplaceAll(ourTiFlashInit, "POD_NUM", "POD_ID")), false},
		{"v1 TiCDC", sh(v1CDC), corev1.Container{Command: []string{"/bin/sh", "-c", ourCDC}}, true},
		{"TiCDC with another gc-ttl", sh(strings.ReplaceAll(v1CDC, "86400", "3600")), sh(ourCDC), false},
		{"v1 Pump", sh(v1Pump), sh(ourPump), true},
		{"Pump with another log level", sh(strings.ReplaceAll(v1Pump, "-L=info", "-L=debug")), sh(ourPump), false},
		{"Pump run by another program", sh(strings.ReplaceAll(v1Pump, "/pump \\", "/drainer \\")), sh(ourPump), false},
		{"inline vs file", sh(v1CDC), corev1.Container{Command: []string{"/bin/sh", "/cdc.sh"}}, false},
	} {
		if got := sameCommand(c.live, c.desired); got != c.want {
			t.Errorf("%s: sameCommand = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRemoveFailGuardsKeepsOtherCases(t *testing.T) {
	t.Parallel()
	script := "case \"$x\" in\n  a) run-a ;;\n  *) exit 1 ;;\nesac\n"
	if got := removeFailGuards(script); got != script {
		t.Errorf("a case that runs a command is not a guard: got %q", got)
	}
	guard := "x=1\ncase \"$x\" in\n  *[!0-9]*) echo bad >&2; exit 2 ;;\nesac\nrun\n"
	if got := statementsOf(guard, nil); len(got) != 2 || got[0][0] != "x=1" || got[1][0] != "run" {
		t.Errorf("a guard that only fails is left out: got %q", got)
	}
}
