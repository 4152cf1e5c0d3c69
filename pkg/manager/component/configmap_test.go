package component

import "testing"

func TestEqualConfigDataComparesEveryTOMLKeyByMeaning(t *testing.T) {
	t.Parallel()
	live := map[string]string{
		"config_templ.toml": "tmp_path = '/data0/tmp'\n[flash]\nservice_addr = '0.0.0.0:3930'\ntcp_port = 9000\n",
		"proxy_templ.toml":  "log-level = 'info'\n",
		"startup-script":    "#!/bin/sh\nexec tiflash\n",
	}
	// Quoting, spacing and key order within a table differ. tmp_path stays
	// above [flash]: below it, it would be flash.tmp_path, another setting.
	reformatted := map[string]string{
		"config_templ.toml": "tmp_path = \"/data0/tmp\"\n\n[flash]\n  tcp_port = 9000\n  service_addr = \"0.0.0.0:3930\"\n",
		"proxy_templ.toml":  "log-level   =   \"info\"",
		"startup-script":    "#!/bin/sh\nexec tiflash\n",
	}
	if !tomlKey("config_templ.toml") || !tomlKey("pump-config") || tomlKey("startup-script") {
		t.Fatal("tomlKey misclassifies keys")
	}
	if !EqualConfigData(live, reformatted) {
		t.Error("reformatted TOML in both TiFlash files compares unequal")
	}
	changed := map[string]string{
		"config_templ.toml": reformatted["config_templ.toml"],
		"proxy_templ.toml":  "log-level = 'debug'\n",
		"startup-script":    live["startup-script"],
	}
	if EqualConfigData(live, changed) {
		t.Error("a changed value in the second TOML file compares equal")
	}
	script := map[string]string{
		"config_templ.toml": live["config_templ.toml"],
		"proxy_templ.toml":  live["proxy_templ.toml"],
		"startup-script":    "#!/bin/sh\n\nexec tiflash\n",
	}
	if EqualConfigData(live, script) {
		t.Error("a start script is compared loosely; it must be byte for byte")
	}
}
