package component

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestStartScriptsRenderPicksTheVersion(t *testing.T) {
	t.Parallel()
	var got ScriptV2
	s := StartScripts{
		V1: func(*v1alpha1.TidbCluster) (string, error) { return "v1", nil },
		V2: func(_ *v1alpha1.TidbCluster, o ScriptV2) (string, error) { got = o; return "v2", nil },
	}
	tc := &v1alpha1.TidbCluster{}
	for version, want := range map[v1alpha1.StartScriptVersion]string{"": "v1", "v1": "v1", "v2": "v2"} {
		tc.Spec.StartScriptVersion = version
		if out, _ := s.Render(tc); out != want {
			t.Errorf("version %q rendered %q, want %q", version, out, want)
		}
	}
	tc.Spec.StartScriptVersion = "v2"
	tc.Spec.StartScriptV2FeatureFlags = []v1alpha1.StartScriptV2FeatureFlag{FlagWaitForDNSNameIPMatch, FlagNoWaitDNS, FlagBashShebang}
	_, _ = s.Render(tc)
	if got.Wait != WaitNone || !got.Bash || got.PreferPDAddresses {
		t.Errorf("options %+v: NoWaitDNS must win over the IP match, BashShebang set", got)
	}
	if out, _ := (StartScripts{V1: s.V1}).Render(tc); out != "v1" {
		t.Errorf("a component without a v2 script renders its one script, got %q", out)
	}
}

func TestPreambleShebang(t *testing.T) {
	t.Parallel()
	if p := (ScriptV2{}).Preamble("pd-server", "PD"); !strings.HasPrefix(p, "#!/bin/sh\n") {
		t.Errorf("default shebang: %q", p[:20])
	}
	if p := (ScriptV2{Bash: true}).Preamble("pd-server", "PD"); !strings.HasPrefix(p, "#!/bin/bash\n") {
		t.Errorf("BashShebang: %q", p[:20])
	}
}

// TestWaitForRuns runs the rendered DNS wait with sh against a stub lookup
// and a stub hostname, so the loop's logic is exercised, not just its text.
func TestWaitForRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatal("the tests need sh")
	}
	bin := t.TempDir()
	stub := "#!/bin/sh\necho 10.0.0.7 192.168.1.2\n"
	if err := os.WriteFile(filepath.Join(bin, "hostname"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		opts   ScriptV2
		lookup string
		ok     bool
	}{
		{"resolves", ScriptV2{Wait: WaitResolve}, `echo 10.9.9.9`, true},
		{"never resolves", ScriptV2{Wait: WaitResolve}, `true`, false},
		{"resolves to the pod", ScriptV2{Wait: WaitIPMatch}, `printf '10.1.1.1\n192.168.1.2\n'`, true},
		{"resolves elsewhere", ScriptV2{Wait: WaitIPMatch}, `echo 10.9.9.9`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			script := "set -u\n" + c.opts.WaitFor(`"pd-0.x"`, c.lookup, 1, false) + "echo started\n"
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			started := strings.Contains(string(out), "started")
			if started != c.ok || (err == nil) != c.ok {
				t.Fatalf("started=%v err=%v, want ok=%v; output:\n%s", started, err, c.ok, out)
			}
		})
	}
}

func TestWaitForNone(t *testing.T) {
	t.Parallel()
	if s := (ScriptV2{Wait: WaitNone}).WaitFor(`"h"`, LookupDig, 30, false); s != "" {
		t.Errorf("NoWaitDNS renders a wait: %q", s)
	}
	if s := (ScriptV2{Wait: WaitResolve}).WaitFor(`"h"`, LookupGetent, 30, true); s != "" {
		t.Errorf("a component that waits only to match addresses renders a plain wait: %q", s)
	}
}

// TestScriptMeaningSeesTheDNSWait: a wait added, dropped or made to match
// the pod's addresses is a change (it rolls the pods), while the same wait
// written another way is not.
func TestScriptMeaningSeesTheDNSWait(t *testing.T) {
	t.Parallel()
	body := "ARGS=\"--name=${POD_NAME}\"\nexec /pd-server ${ARGS}\n"
	resolve := (ScriptV2{Wait: WaitResolve}).WaitFor(`"h"`, LookupDig, 30, false)
	match := (ScriptV2{Wait: WaitIPMatch}).WaitFor(`"h"`, LookupDig, 30, false)
	otherResolve := "until nslookup h >/dev/null 2>&1; do sleep 1; done\n"
	if !sameScriptMeaning(resolve+body, otherResolve+body) {
		t.Error("the same wait written otherwise must compare equal")
	}
	for name, pair := range map[string][2]string{
		"wait added":   {body, resolve + body},
		"ip match set": {resolve + body, match + body},
	} {
		if sameScriptMeaning(pair[0], pair[1]) {
			t.Errorf("%s: must compare different", name)
		}
	}
}
