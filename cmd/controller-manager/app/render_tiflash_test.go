package app

import (
	"bytes"
	"strings"
	"testing"
)

// TestRenderTiFlashExample: render prints TiFlash's Service, ConfigMap and
// StatefulSet between PD's and TiKV's, in the registry's order.
func TestRenderTiFlashExample(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := renderMain([]string{"-f", "../../../examples/tiflash/tidb-cluster.yaml"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	order := []string{"name: tiflash-pd-peer", "name: tiflash-tiflash-peer", "config_templ.toml", "proxy_templ.toml",
		"tiflash.proxy.prometheus.io/port", "name: data0", "name: tiflash-tikv-peer"}
	at := 0
	for _, s := range order {
		i := strings.Index(text[at:], s)
		if i < 0 {
			t.Fatalf("render output lacks %q after offset %d (or it is out of order)", s, at)
		}
		at += i
	}
}
