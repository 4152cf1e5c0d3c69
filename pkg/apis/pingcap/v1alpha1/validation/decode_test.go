package validation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestValidateUnreadable checks that objects the API server accepted but the
// Go types could not hold are invalid, with the field named.
func TestValidateUnreadable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, spec string
		wantField  string
	}{
		{name: "broken TOML", spec: `{"pd":{"replicas":1,"config":"this is [ not toml = = "}}`, wantField: "spec.pd.config"},
		{name: "config as a number", spec: `{"tikv":{"replicas":1,"config":5}}`, wantField: "spec.tikv.config"},
		{name: "config as a list", spec: `{"tidb":{"replicas":1,"config":[1,2]}}`, wantField: "spec.tidb.config"},
		{name: "PD micro-service config", spec: `{"pdms":[{"name":"tso","config":true}]}`, wantField: "spec.pdms[0].config"},
		{name: "TiFlash config", spec: `{"pd":{"replicas":1},"tiflash":{"replicas":1,"config":7}}`, wantField: "spec.tiflash.config"},
		{name: "wrong type in a Kubernetes type", spec: `{"tikv":{"podSecurityContext":{"runAsUser":"root"}}}`,
			wantField: "spec.tikv.podSecurityContext.runAsUser"},
		{name: "env value as a number", spec: `{"tidb":{"env":[{"name":"A","value":5}]}}`, wantField: "spec.tidb.env.value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var tc v1alpha1.TidbCluster
			if err := json.Unmarshal([]byte(`{"metadata":{"name":"x"},"spec":`+c.spec+`}`), &tc); err != nil {
				t.Fatalf("decoding failed, it must never: %v", err)
			}
			errs := ValidateTidbCluster(&tc)
			if len(errs) == 0 {
				t.Fatalf("no error for %s", c.spec)
			}
			if !strings.HasPrefix(errs[0].Field, c.wantField) {
				t.Errorf("first error %q, want it at field %s", errs.ToAggregate(), c.wantField)
			}
		})
	}
}

func TestValidateUnreadableBackups(t *testing.T) {
	t.Parallel()
	data := []byte(`{"metadata":{"name":"b"},"spec":{"tolerations":[{"tolerationSeconds":"soon"}],"maxBackups":"all"}}`)
	var b v1alpha1.Backup
	var r v1alpha1.Restore
	var bs v1alpha1.BackupSchedule
	for _, obj := range []json.Unmarshaler{&b, &r, &bs} {
		if err := obj.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
	}
	for name, errs := range map[string]int{
		"Backup": len(ValidateBackup(&b)), "Restore": len(ValidateRestore(&r)), "BackupSchedule": len(ValidateBackupSchedule(&bs)),
	} {
		if errs != 1 {
			t.Errorf("%s: %d errors, want exactly the unreadable field", name, errs)
		}
	}
}
