package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// DecodeError records, in memory only, why the spec of an object the API
// server stored could not be read into these Go types: a wrong type inside a
// pass-through Kubernetes field (`podSecurityContext: {runAsUser: "root"}`),
// say, which the CRD schema leaves open to stay small. Reading such an object
// does not fail — a failing read would stop the informer from listing every
// other object of the kind — it yields the object's metadata and status, a
// zero Spec and this record; validation reports it before anything is
// written.
type DecodeError struct {
	// Field is the JSON path of the value that could not be read, such as
	// spec.tikv.podSecurityContext.runAsUser ("spec" when unknown).
	Field string
	// Message is the decoder's error.
	Message string
	// Spec is the spec exactly as stored; encoding the object writes it back
	// unchanged, so a copy of a poison object never loses the user's input.
	Spec json.RawMessage
}

// Error returns the decoder's message.
func (e *DecodeError) Error() string { return e.Message }

// objectParts is every object of this API with its spec and status unread.
// It spells out TypeMeta's two fields instead of embedding TypeMeta, because
// controller-gen takes every type that embeds both TypeMeta and ObjectMeta
// for a CRD kind (and fails on the RawMessage fields).
type objectParts struct {
	APIVersion        string `json:"apiVersion,omitempty"`
	Kind              string `json:"kind,omitempty"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              json.RawMessage `json:"spec,omitempty"`
	Status            json.RawMessage `json:"status,omitempty"`
}

// decodeTolerant reads data into whole with the API machinery's own JSON
// rules (case-sensitive keys, exact integers) and returns the spec's fields
// unknown to the Go types (see unmarshalNoting). When reading fails it
// reads the metadata, and then spec and status each on their own: a spec
// that cannot be read is returned as a DecodeError with a zero spec, a
// status that cannot be read is dropped (the operator writes it anew). It
// errors only when data is not a JSON object with readable metadata.
func decodeTolerant[S, T any](data []byte, whole any, typeMeta *metav1.TypeMeta, objectMeta *metav1.ObjectMeta,
	spec *S, status *T) (*DecodeError, []string, error) {
	unknown, err := unmarshalNoting(data, whole, "spec.", "")
	if err == nil {
		return nil, unknown, nil
	}
	var parts objectParts
	if partsErr := utiljson.Unmarshal(data, &parts); partsErr != nil {
		return nil, nil, err
	}
	*typeMeta = metav1.TypeMeta{APIVersion: parts.APIVersion, Kind: parts.Kind}
	*objectMeta = parts.ObjectMeta
	var s S
	var decodeErr *DecodeError
	if len(parts.Spec) > 0 {
		if specErr := utiljson.Unmarshal(parts.Spec, &s); specErr != nil {
			decodeErr = newDecodeError(specErr, parts.Spec)
			s = *new(S)
		}
	}
	*spec = s
	var st T
	if len(parts.Status) > 0 && utiljson.Unmarshal(parts.Status, &st) != nil {
		st = *new(T)
	}
	*status = st
	return decodeErr, nil, nil
}

// newDecodeError names the field of a JSON type error read from the spec:
// "json: cannot unmarshal string into Go struct field X.a.B.c of type int64"
// becomes field spec.a.c (B, an embedded Go struct, is not in the JSON) and
// the message "spec.a.c: cannot read a string as int64".
func newDecodeError(err error, spec json.RawMessage) *DecodeError {
	out := &DecodeError{Field: "spec", Message: "spec: " + err.Error(), Spec: append(json.RawMessage(nil), spec...)}
	msg := err.Error()
	value, rest, ok := cut(msg, "cannot unmarshal ", " into Go struct field ")
	if !ok {
		return out
	}
	path, goType, ok := strings.Cut(rest, " of type ")
	if !ok {
		return out
	}
	var segments []string
	for i, seg := range strings.Split(path, ".") {
		// The first segment is the Go struct holding the field; embedded
		// structs show as capitalised segments. JSON names start lower-case.
		if i > 0 && seg != "" && !unicode.IsUpper(rune(seg[0])) {
			segments = append(segments, seg)
		}
	}
	out.Field = strings.Join(append([]string{"spec"}, segments...), ".")
	out.Message = fmt.Sprintf("%s: cannot read a %s as %s", out.Field, value, goType)
	return out
}

// cut returns the text between before and after in s.
func cut(s, before, after string) (between, rest string, ok bool) {
	_, s, ok = strings.Cut(s, before)
	if !ok {
		return "", "", false
	}
	return strings.Cut(s, after)
}

// encodeKeepingSpec encodes plain and, when decodeErr kept a spec that could
// not be read, puts that spec back in place of the zero one.
func encodeKeepingSpec(plain any, decodeErr *DecodeError) ([]byte, error) {
	data, err := json.Marshal(plain)
	if err != nil || decodeErr == nil || len(decodeErr.Spec) == 0 {
		return data, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	fields["spec"] = decodeErr.Spec
	return json.Marshal(fields)
}

// UnmarshalJSON reads a TidbCluster; a spec that cannot be read is kept in
// DecodeError instead of failing (see DecodeError). It errors only when the
// metadata cannot be read.
func (tc *TidbCluster) UnmarshalJSON(data []byte) error {
	type plain TidbCluster
	*tc = TidbCluster{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(tc), &tc.TypeMeta, &tc.ObjectMeta, &tc.Spec, &tc.Status)
	tc.DecodeError, tc.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a TidbCluster; a spec kept in DecodeError is written
// back as it was received.
func (tc TidbCluster) MarshalJSON() ([]byte, error) {
	type plain TidbCluster
	return encodeKeepingSpec(plain(tc), tc.DecodeError)
}

// UnmarshalJSON reads a Backup like TidbCluster.UnmarshalJSON.
func (b *Backup) UnmarshalJSON(data []byte) error {
	type plain Backup
	*b = Backup{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(b), &b.TypeMeta, &b.ObjectMeta, &b.Spec, &b.Status)
	b.DecodeError, b.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a Backup like TidbCluster.MarshalJSON.
func (b Backup) MarshalJSON() ([]byte, error) {
	type plain Backup
	return encodeKeepingSpec(plain(b), b.DecodeError)
}

// UnmarshalJSON reads a Restore like TidbCluster.UnmarshalJSON.
func (r *Restore) UnmarshalJSON(data []byte) error {
	type plain Restore
	*r = Restore{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(r), &r.TypeMeta, &r.ObjectMeta, &r.Spec, &r.Status)
	r.DecodeError, r.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a Restore like TidbCluster.MarshalJSON.
func (r Restore) MarshalJSON() ([]byte, error) {
	type plain Restore
	return encodeKeepingSpec(plain(r), r.DecodeError)
}

// UnmarshalJSON reads a BackupSchedule like TidbCluster.UnmarshalJSON.
func (bs *BackupSchedule) UnmarshalJSON(data []byte) error {
	type plain BackupSchedule
	*bs = BackupSchedule{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(bs), &bs.TypeMeta, &bs.ObjectMeta, &bs.Spec, &bs.Status)
	bs.DecodeError, bs.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a BackupSchedule like TidbCluster.MarshalJSON.
func (bs BackupSchedule) MarshalJSON() ([]byte, error) {
	type plain BackupSchedule
	return encodeKeepingSpec(plain(bs), bs.DecodeError)
}

// UnmarshalJSON reads a TidbInitializer like TidbCluster.UnmarshalJSON.
func (ti *TidbInitializer) UnmarshalJSON(data []byte) error {
	type plain TidbInitializer
	*ti = TidbInitializer{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(ti), &ti.TypeMeta, &ti.ObjectMeta, &ti.Spec, &ti.Status)
	ti.DecodeError, ti.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a TidbInitializer like TidbCluster.MarshalJSON.
func (ti TidbInitializer) MarshalJSON() ([]byte, error) {
	type plain TidbInitializer
	return encodeKeepingSpec(plain(ti), ti.DecodeError)
}

// UnmarshalJSON reads a TidbMonitor like TidbCluster.UnmarshalJSON.
func (tm *TidbMonitor) UnmarshalJSON(data []byte) error {
	type plain TidbMonitor
	*tm = TidbMonitor{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(tm), &tm.TypeMeta, &tm.ObjectMeta, &tm.Spec, &tm.Status)
	tm.DecodeError, tm.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a TidbMonitor like TidbCluster.MarshalJSON.
func (tm TidbMonitor) MarshalJSON() ([]byte, error) {
	type plain TidbMonitor
	return encodeKeepingSpec(plain(tm), tm.DecodeError)
}

// UnmarshalJSON reads a TidbDashboard like TidbCluster.UnmarshalJSON.
func (td *TidbDashboard) UnmarshalJSON(data []byte) error {
	type plain TidbDashboard
	*td = TidbDashboard{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(td), &td.TypeMeta, &td.ObjectMeta, &td.Spec, &td.Status)
	td.DecodeError, td.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a TidbDashboard like TidbCluster.MarshalJSON.
func (td TidbDashboard) MarshalJSON() ([]byte, error) {
	type plain TidbDashboard
	return encodeKeepingSpec(plain(td), td.DecodeError)
}

// UnmarshalJSON reads a TidbNGMonitoring like TidbCluster.UnmarshalJSON.
func (tngm *TidbNGMonitoring) UnmarshalJSON(data []byte) error {
	type plain TidbNGMonitoring
	*tngm = TidbNGMonitoring{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(tngm), &tngm.TypeMeta, &tngm.ObjectMeta, &tngm.Spec, &tngm.Status)
	tngm.DecodeError, tngm.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a TidbNGMonitoring like TidbCluster.MarshalJSON.
func (tngm TidbNGMonitoring) MarshalJSON() ([]byte, error) {
	type plain TidbNGMonitoring
	return encodeKeepingSpec(plain(tngm), tngm.DecodeError)
}

// UnmarshalJSON reads a DMCluster like TidbCluster.UnmarshalJSON.
func (dc *DMCluster) UnmarshalJSON(data []byte) error {
	type plain DMCluster
	*dc = DMCluster{}
	decodeErr, unknown, err := decodeTolerant(data, (*plain)(dc), &dc.TypeMeta, &dc.ObjectMeta, &dc.Spec, &dc.Status)
	dc.DecodeError, dc.UnknownFields = decodeErr, unknown
	return err
}

// MarshalJSON writes a DMCluster like TidbCluster.MarshalJSON.
func (dc DMCluster) MarshalJSON() ([]byte, error) {
	type plain DMCluster
	return encodeKeepingSpec(plain(dc), dc.DecodeError)
}
