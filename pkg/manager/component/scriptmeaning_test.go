package component

import (
	"strings"
	"testing"
)

// oursPD is shaped like our PD start script.
const oursPD = `#!/bin/sh
set -u
if grep -q '^runmode="debug"$' /etc/podinfo/annotations; then
  exec tail -f /dev/null
fi
POD_NAME=${POD_NAME:-$HOSTNAME}
FQDN="${POD_NAME}.${PEER_SERVICE_NAME}.${NAMESPACE}.svc"
DATA_DIR=/var/lib/pd
ARGS="--data-dir=${DATA_DIR} \
--name=${POD_NAME} \
--advertise-peer-urls=http://${FQDN}:2380 \
--config=/etc/pd/pd.toml"
if [ -f "${DATA_DIR}/join" ]; then
  join=$(tr ',' '\n' < "${DATA_DIR}/join" | paste -sd, -)
  ARGS="${ARGS} --join=${join}"
fi
exec /pd-server ${ARGS}
`

// v1PD is shaped like the TiDB Operator v1's: other variable names, bash
// tests, literal paths, a trailing continuation, comments.
const v1PD = `#!/bin/sh
# starts PD
set -uo pipefail
source /etc/podinfo/annotations 2>/dev/null
runmode=${runmode:-normal}
if [[ X${runmode} == Xdebug ]]; then
    tail -f /dev/null
fi
POD_NAME=${POD_NAME:-$HOSTNAME}
domain="${POD_NAME}.${PEER_SERVICE_NAME}.${NAMESPACE}.svc"
ARGS="--data-dir=/var/lib/pd \
--name=${POD_NAME} \
--advertise-peer-urls=http://${domain}:2380 \
--config=/etc/pd/pd.toml \
"
if [[ -f /var/lib/pd/join ]]; then
join=` + "`cat /var/lib/pd/join | tr \",\" \"\\n\"`" + `
join=${join%,}
ARGS="${ARGS} --join=${join}"
fi
echo "/pd-server ${ARGS}"
exec /pd-server ${ARGS}
`

func TestStartScriptsComparedByCommandLine(t *testing.T) {
	t.Parallel()
	if !sameScriptMeaning(oursPD, v1PD) {
		a, _ := scriptMeaningOf(oursPD)
		b, _ := scriptMeaningOf(v1PD)
		t.Fatalf("same command line, other text: must compare equal\nours %+v\nv1   %+v", a, b)
	}
	for name, edit := range map[string][2]string{
		"data dir": {"--data-dir=/var/lib/pd", "--data-dir=/var/lib/pd/sub"},
		"scheme":   {"http://${domain}", "https://${domain}"},
		"name":     {"--name=${POD_NAME}", "--name=${domain}"},
		"binary":   {"exec /pd-server", "exec /pd-server-next"},
		"new flag": {"--config=/etc/pd/pd.toml", "--config=/etc/pd/pd.toml --log-level=debug"},
	} {
		changed := strings.Replace(v1PD, edit[0], edit[1], 1)
		if changed == v1PD {
			t.Fatalf("%s: edit did not apply", name)
		}
		if sameScriptMeaning(oursPD, changed) {
			t.Errorf("%s changed: must compare different", name)
		}
	}
	if sameScriptMeaning("echo hi", "echo hi") {
		t.Error("a script that execs no server has no meaning to compare: byte comparison decides")
	}
}

func TestEqualConfigDataComparesStartScriptsByMeaning(t *testing.T) {
	t.Parallel()
	ours := map[string]string{ConfigFileKey: "[replication]\nmax-replicas = 3\n", StartScriptKey: oursPD}
	v1 := map[string]string{ConfigFileKey: "[replication]\n  max-replicas = 3", StartScriptKey: v1PD}
	if !EqualConfigData(v1, ours) {
		t.Fatal("v1's ConfigMap for the same cluster must compare equal")
	}
	v1[ConfigFileKey] = "[replication]\nmax-replicas = 5\n"
	if EqualConfigData(v1, ours) {
		t.Fatal("a changed config value must compare different")
	}
}
