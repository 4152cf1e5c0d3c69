package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDecodeTolerant reads objects the API server accepts (their CRD schema
// leaves Kubernetes pass-through types open) through the list type, as an
// informer does, and checks that one unreadable spec never fails the list.
func TestDecodeTolerant(t *testing.T) {
	t.Parallel()
	const healthy = `{"metadata":{"name":"ok","uid":"u1"},"spec":{"tikv":{"replicas":3}},"status":{"clusterID":"7"}}`
	cases := []struct {
		name, item, wantField, wantMsg string
	}{
		{name: "string for an int64", item: `{"tikv":{"podSecurityContext":{"runAsUser":"root"}}}`,
			wantField: "spec.tikv.podSecurityContext.runAsUser", wantMsg: "cannot read a string as"},
		{name: "number for an object", item: `{"affinity":{"nodeAffinity":5}}`,
			wantField: "spec.affinity.nodeAffinity", wantMsg: "cannot read a number as"},
		{name: "string for a list", item: `{"dnsConfig":{"nameservers":"1.1.1.1"}}`,
			wantField: "spec.dnsConfig.nameservers", wantMsg: "cannot read a string as"},
		{name: "garbage container", item: `{"pd":{"additionalContainers":[{"name":5,"image":[]}]}}`,
			wantField: "spec.pd.additionalContainers.name", wantMsg: "cannot read a number as"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			poison := `{"metadata":{"name":"bad","uid":"u2","generation":4},"spec":` + c.item + `,"status":{"clusterID":"9"}}`
			var list TidbClusterList
			if err := json.Unmarshal([]byte(`{"items":[`+healthy+`,`+poison+`]}`), &list); err != nil {
				t.Fatalf("decoding the list failed: %v", err)
			}
			ok, bad := list.Items[0], list.Items[1]
			if ok.DecodeError != nil || ok.Spec.TiKV == nil || ok.Spec.TiKV.Replicas != 3 || ok.Status.ClusterID != "7" {
				t.Errorf("healthy item read wrongly: %+v", ok)
			}
			if bad.Name != "bad" || bad.Generation != 4 || bad.Status.ClusterID != "9" {
				t.Errorf("poison item lost its metadata or status: %+v %+v", bad.ObjectMeta, bad.Status)
			}
			if bad.DecodeError == nil {
				t.Fatalf("poison item has no DecodeError")
			}
			if bad.DecodeError.Field != c.wantField || !strings.Contains(bad.DecodeError.Message, c.wantMsg) {
				t.Errorf("DecodeError = %q, %q; want field %q and a message containing %q",
					bad.DecodeError.Field, bad.DecodeError.Message, c.wantField, c.wantMsg)
			}
			if bad.Spec.TiKV != nil || bad.Spec.PD != nil {
				t.Errorf("poison item's spec should be zero, got %+v", bad.Spec)
			}
			assertSpecRoundTrips(t, &bad, c.item)
		})
	}
}

// assertSpecRoundTrips encodes tc (and a deep copy) and wants spec back as
// it was received.
func assertSpecRoundTrips(t *testing.T, tc *TidbCluster, spec string) {
	t.Helper()
	for _, obj := range []*TidbCluster{tc, tc.DeepCopy()} {
		out, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("encoding the poison item: %v", err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(out, &fields); err != nil {
			t.Fatal(err)
		}
		if string(fields["spec"]) != spec {
			t.Errorf("encoded spec = %s, want the input %s", fields["spec"], spec)
		}
	}
}

// TestDecodeStatusUnreadable drops an unreadable status and keeps the spec.
func TestDecodeStatusUnreadable(t *testing.T) {
	t.Parallel()
	var tc TidbCluster
	in := `{"metadata":{"name":"x"},"spec":{"tidb":{"replicas":2}},"status":{"clusterID":5}}`
	if err := json.Unmarshal([]byte(in), &tc); err != nil {
		t.Fatal(err)
	}
	if tc.DecodeError != nil || tc.Spec.TiDB == nil || tc.Spec.TiDB.Replicas != 2 || tc.Status.ClusterID != "" {
		t.Errorf("got decodeErr %v spec %+v status %+v; want the spec kept and the status dropped", tc.DecodeError, tc.Spec, tc.Status)
	}
}

// TestDecodeOtherKinds covers Backup, Restore and BackupSchedule, and a
// healthy object whose reading must not change.
func TestDecodeOtherKinds(t *testing.T) {
	t.Parallel()
	bad := []byte(`{"metadata":{"name":"b"},"spec":{"tolerations":[{"tolerationSeconds":"x"}]}}`)
	var b Backup
	var r Restore
	var bs BackupSchedule
	for name, obj := range map[string]interface {
		json.Unmarshaler
	}{"Backup": &b, "Restore": &r, "BackupSchedule": &bs} {
		if err := obj.UnmarshalJSON(bad); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if b.DecodeError == nil || r.DecodeError == nil {
		t.Errorf("Backup %v, Restore %v: want DecodeErrors", b.DecodeError, r.DecodeError)
	}
	if b.Name != "b" || r.Name != "b" || bs.Name != "b" {
		t.Errorf("names lost: %q %q %q", b.Name, r.Name, bs.Name)
	}
	var good Backup
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"g"},"spec":{"s3":{"bucket":"x"}}}`), &good); err != nil ||
		good.DecodeError != nil || good.Spec.S3 == nil || good.Spec.S3.Bucket != "x" {
		t.Errorf("healthy Backup read as %+v, %v", good, err)
	}
	if err := json.Unmarshal([]byte(`{"metadata":"x"}`), &good); err == nil {
		t.Errorf("unreadable metadata must still fail")
	}
}
