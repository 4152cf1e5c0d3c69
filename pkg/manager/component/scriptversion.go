package component

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// The v2 start scripts' feature flags (spec.startScriptV2FeatureFlags).
const (
	// FlagWaitForDNSNameIPMatch makes a v2 script wait until the pod's own
	// DNS name resolves to one of the pod's addresses, not merely resolves.
	FlagWaitForDNSNameIPMatch v1alpha1.StartScriptV2FeatureFlag = "WaitForDnsNameIpMatch"
	// FlagPreferPDAddressesOverDiscovery makes PD join spec.pdAddresses
	// instead of asking the discovery service.
	FlagPreferPDAddressesOverDiscovery v1alpha1.StartScriptV2FeatureFlag = "PreferPDAddressesOverDiscovery"
	// FlagBashShebang opens the v2 scripts with #!/bin/bash.
	FlagBashShebang v1alpha1.StartScriptV2FeatureFlag = "BashShebang"
	// FlagNoWaitDNS skips every DNS wait of the v2 scripts.
	FlagNoWaitDNS v1alpha1.StartScriptV2FeatureFlag = "NoWaitDNS"
)

// StartScripts is a component's start script in each generation
// spec.startScriptVersion can choose. V2 is nil for a component whose
// script is the same in both generations.
type StartScripts struct {
	V1 func(tc *v1alpha1.TidbCluster) (string, error)
	V2 func(tc *v1alpha1.TidbCluster, opts ScriptV2) (string, error)
}

// Render returns the script tc's spec.startScriptVersion selects: V2 with
// the options of spec.startScriptV2FeatureFlags for "v2", V1 otherwise
// (unset or "v1", the default). It errors only when the chosen renderer does.
func (s StartScripts) Render(tc *v1alpha1.TidbCluster) (string, error) {
	if tc.Spec.StartScriptVersion == "v2" && s.V2 != nil {
		return s.V2(tc, NewScriptV2(tc))
	}
	return s.V1(tc)
}

// DNSWait is how a v2 script waits for the pod's own DNS name.
type DNSWait int

// The DNS waits a v2 script may do.
const (
	// WaitResolve waits until the name resolves.
	WaitResolve DNSWait = iota
	// WaitIPMatch waits until the name resolves to one of the pod's addresses.
	WaitIPMatch
	// WaitNone does not wait.
	WaitNone
)

// ScriptV2 is what spec.startScriptV2FeatureFlags asks of the v2 scripts.
type ScriptV2 struct {
	// Bash opens the script with #!/bin/bash instead of #!/bin/sh.
	Bash bool
	// Wait is the DNS wait (NoWaitDNS wins over WaitForDnsNameIpMatch).
	Wait DNSWait
	// PreferPDAddresses makes PD join spec.pdAddresses when it lists any.
	PreferPDAddresses bool
}

// NewScriptV2 reads tc's feature flags.
func NewScriptV2(tc *v1alpha1.TidbCluster) ScriptV2 {
	flags := tc.Spec.StartScriptV2FeatureFlags
	o := ScriptV2{
		Bash:              slices.Contains(flags, FlagBashShebang),
		PreferPDAddresses: slices.Contains(flags, FlagPreferPDAddressesOverDiscovery),
	}
	switch {
	case slices.Contains(flags, FlagNoWaitDNS):
		o.Wait = WaitNone
	case slices.Contains(flags, FlagWaitForDNSNameIPMatch):
		o.Wait = WaitIPMatch
	}
	return o
}

// Preamble returns the opening of a v2 script: the shebang the flags ask
// for, then what every script shares (ScriptPreamble's debug switch).
func (o ScriptV2) Preamble(server, component string) string {
	p := ScriptPreamble(server, component)
	p = strings.Replace(p, "# Start script of ", "# Start script (v2) of ", 1)
	if o.Bash {
		p = strings.Replace(p, "#!/bin/sh", "#!/bin/bash", 1)
	}
	return p
}

// DNS lookups a v2 wait may run; each prints the addresses a name resolves
// to, one a line or separated by blanks.
const (
	// LookupDig asks for the name's A and AAAA records with dig.
	LookupDig = `dig +search +short "$1" A "$1" AAAA`
	// LookupGetent asks the resolver library through getent.
	LookupGetent = `getent ahosts "$1" | awk '{print $1}' | sort -u`
)

// WaitFor returns the shell that waits, as o.Wait says, for host (a shell
// word, may hold variables) to resolve with lookup, at most timeout
// seconds before the script exits 1; "" when o.Wait is WaitNone, and also
// for WaitResolve when onlyIPMatch (a component whose v2 script waits only
// to match addresses).
func (o ScriptV2) WaitFor(host, lookup string, timeout int, onlyIPMatch bool) string {
	if o.Wait == WaitNone || o.Wait == WaitResolve && onlyIPMatch {
		return ""
	}
	match := `[ -n "$addrs" ]`
	what := "resolve"
	if o.Wait == WaitIPMatch {
		match = `[ -n "$addrs" ] && own_address $addrs`
		what = "resolve to one of this pod's addresses"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n# Wait until the pod's own name is served (%s).\n", what)
	fmt.Fprintf(&b, "lookup() {\n  %s 2>/dev/null\n}\n", lookup)
	if o.Wait == WaitIPMatch {
		b.WriteString(`own_address() {
  mine=" $(hostname -I 2>/dev/null || hostname -i 2>/dev/null) "
  for a in "$@"; do
    case "$mine" in *" $a "*) return 0 ;; esac
  done
  return 1
}
`)
	}
	fmt.Fprintf(&b, `HOST=%[1]s
waited=0
while :; do
  addrs=$(lookup "$HOST" | tr '\n' ' ')
  if %[2]s; then
    break
  fi
  waited=$((waited + 1))
  if [ "$waited" -ge %[3]d ]; then
    echo "$HOST did not %[4]s within %[3]ds (got: ${addrs:-nothing})" >&2
    exit 1
  fi
  sleep 1
done
`, host, match, timeout, what)
	return b.String()
}

// shellDoubleQuoted escapes what a POSIX shell interprets inside double
// quotes; built once (a Replacer builds its tables on first use).
var shellDoubleQuoted = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`", `$`, `\$`)

// EscapeInDoubleQuotes escapes the characters a shell interprets inside
// double quotes (backslash, double quote, backquote, dollar), so that a
// value from the spec cannot inject shell code into a start script.
func EscapeInDoubleQuotes(s string) string { return shellDoubleQuoted.Replace(s) }

// DoubleQuoteClusterName renders s as a double-quoted shell word in which
// only ${CLUSTER_NAME} expands, so that addresses from the spec cannot
// inject shell code into a start script.
func DoubleQuoteClusterName(s string) string {
	return `"` + strings.ReplaceAll(EscapeInDoubleQuotes(s), `\${CLUSTER_NAME}`, `${CLUSTER_NAME}`) + `"`
}
