package v1alpha1

import (
	"encoding/json"
	"testing"
)

// decodedObject is what the four monitoring and initialization kinds share
// for TestDecodeMonitoringKinds.
type decodedObject interface {
	json.Unmarshaler
	decodeError() *DecodeError
}

func (ti *TidbInitializer) decodeError() *DecodeError    { return ti.DecodeError }
func (tm *TidbMonitor) decodeError() *DecodeError        { return tm.DecodeError }
func (td *TidbDashboard) decodeError() *DecodeError      { return td.DecodeError }
func (tngm *TidbNGMonitoring) decodeError() *DecodeError { return tngm.DecodeError }

// TestDecodeMonitoringKinds reads a TidbInitializer, TidbMonitor,
// TidbDashboard and TidbNGMonitoring whose spec has a wrong type inside a
// Kubernetes type (a toleration's tolerationSeconds as a string): reading
// does not fail, DecodeError names the field, the name is kept, and encoding
// writes the spec back as received.
func TestDecodeMonitoringKinds(t *testing.T) {
	t.Parallel()
	const spec = `{"tolerations":[{"tolerationSeconds":"x"}]}`
	bad := []byte(`{"metadata":{"name":"b"},"spec":` + spec + `}`)
	objs := map[string]decodedObject{
		"TidbInitializer": &TidbInitializer{}, "TidbMonitor": &TidbMonitor{},
		"TidbDashboard": &TidbDashboard{}, "TidbNGMonitoring": &TidbNGMonitoring{},
	}
	for kind, obj := range objs {
		if err := obj.UnmarshalJSON(bad); err != nil {
			t.Errorf("%s: reading failed: %v", kind, err)
			continue
		}
		de := obj.decodeError()
		if de == nil || de.Field != "spec.tolerations.tolerationSeconds" {
			t.Errorf("%s: DecodeError = %+v, want field spec.tolerations.tolerationSeconds", kind, de)
		}
		out, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("%s: encoding: %v", kind, err)
		}
		var fields struct {
			Metadata struct{ Name string } `json:"metadata"`
			Spec     json.RawMessage       `json:"spec"`
		}
		if err := json.Unmarshal(out, &fields); err != nil {
			t.Fatal(err)
		}
		if fields.Metadata.Name != "b" || string(fields.Spec) != spec {
			t.Errorf("%s: encoded name %q spec %s, want b and the input %s", kind, fields.Metadata.Name, fields.Spec, spec)
		}
	}
}

// TestDecodeMonitoringKindsHealthy reads a healthy object of each kind and
// checks a field and the status come through, with no DecodeError.
func TestDecodeMonitoringKindsHealthy(t *testing.T) {
	t.Parallel()
	var ti TidbInitializer
	var tm TidbMonitor
	var td TidbDashboard
	var tngm TidbNGMonitoring
	read := func(obj any, in string) {
		if err := json.Unmarshal([]byte(in), obj); err != nil {
			t.Errorf("reading %s: %v", in, err)
		}
	}
	read(&ti, `{"metadata":{"name":"i"},"spec":{"image":"x","cluster":{"name":"c"}},"status":{"phase":"Completed","succeeded":1}}`)
	read(&tm, `{"metadata":{"name":"m"},"spec":{"prometheus":{"baseImage":"prom/prometheus"}},"status":{"deploymentStorageStatus":{"pvName":"pv1"}}}`)
	read(&td, `{"metadata":{"name":"d"},"spec":{"clusters":[{"name":"c"}]},"status":{"phase":"Normal","synced":true}}`)
	read(&tngm, `{"metadata":{"name":"n"},"spec":{"clusters":[{"name":"c"}],"ngMonitoring":{"retentionPeriod":"5d"}},"status":{"ngMonitoring":{"phase":"Normal"}}}`)
	checks := map[string]bool{
		"TidbInitializer":  ti.DecodeError == nil && ti.Spec.Cluster.Name == "c" && ti.Status.Phase == InitializePhaseCompleted && ti.Status.Succeeded == 1,
		"TidbMonitor":      tm.DecodeError == nil && tm.Spec.Prometheus.BaseImage == "prom/prometheus" && tm.Status.DeploymentStorageStatus != nil && tm.Status.DeploymentStorageStatus.PvName == "pv1",
		"TidbDashboard":    td.DecodeError == nil && len(td.Spec.Clusters) == 1 && td.Status.Synced && td.Status.Phase == NormalPhase,
		"TidbNGMonitoring": tngm.DecodeError == nil && tngm.Spec.NGMonitoring.RetentionPeriod == "5d" && tngm.Status.NGMonitoring.Phase == NormalPhase,
	}
	for kind, ok := range checks {
		if !ok {
			t.Errorf("%s was not read as written", kind)
		}
	}
}
