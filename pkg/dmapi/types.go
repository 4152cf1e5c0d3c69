package dmapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// MasterMember is one dm-master of `GET /apis/v1alpha1/members?master=true` (dm-master's pb.MasterInfo).
type MasterMember struct {
	// Name is the member name, the pod name for the operator's members ("<dc>-dm-master-<i>").
	Name string `json:"name"`
	// MemberID is the etcd member ID, rendered in decimal.
	MemberID MemberID `json:"memberID"`
	// Alive is whether dm-master sees the member's etcd endpoint healthy.
	Alive bool `json:"alive"`
	// PeerURLs are the member's peer URLs, "<scheme>://<pod>.<dc>-dm-master-peer:8291".
	PeerURLs []string `json:"peerURLs"`
	// ClientURLs are the member's client URLs (port 8261).
	ClientURLs []string `json:"clientURLs"`
}

// WorkerMember is one dm-worker of `GET /apis/v1alpha1/members?worker=true` (dm-master's pb.WorkerInfo).
type WorkerMember struct {
	// Name is the worker name, the pod name for the operator's workers ("<dc>-dm-worker-<i>").
	Name string `json:"name"`
	// Addr is the worker's advertised address, "<pod>.<dc>-dm-worker-peer:8262".
	Addr string `json:"addr"`
	// Stage is StageFree, StageBound or StageOffline.
	Stage string `json:"stage"`
	// Source is the upstream source the worker is bound to; empty unless bound.
	Source string `json:"source"`
}

// The stages of a dm-worker as dm-master reports them.
const (
	StageFree    = "free"
	StageBound   = "bound"
	StageOffline = "offline"
)

// Leader is the dm-master leader of `GET /apis/v1alpha1/members?leader=true` (pb.ListLeaderMember).
type Leader struct {
	// Msg is dm-master's message, e.g. why there is no leader.
	Msg string `json:"msg"`
	// Name is the leader's member name; empty when there is none.
	Name string `json:"name"`
	// Addr is the leader's advertised address.
	Addr string `json:"addr"`
}

// MemberID is an etcd member ID. grpc-gateway renders uint64 fields as JSON strings, and older builds as
// numbers; both decode.
type MemberID string

// UnmarshalJSON accepts a JSON string or number; it errors on anything else.
func (m *MemberID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		*m = ""
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("memberID %s: %w", data, err)
		}
		*m = MemberID(s)
		return nil
	}
	if _, err := strconv.ParseUint(string(data), 10, 64); err != nil {
		return fmt.Errorf("memberID %s: %w", data, err)
	}
	*m = MemberID(data)
	return nil
}

// envelope is the answer of every call: the list calls carry members, the writes only result and msg.
type envelope struct {
	Result  bool         `json:"result"`
	Msg     string       `json:"msg"`
	Members []memberList `json:"members"`
}

// memberList is one element of envelope.Members; exactly one of its fields is set.
type memberList struct {
	Master *struct {
		Msg     string         `json:"msg"`
		Masters []MasterMember `json:"masters"`
	} `json:"master,omitempty"`
	Worker *struct {
		Msg     string         `json:"msg"`
		Workers []WorkerMember `json:"workers"`
	} `json:"worker,omitempty"`
	Leader *Leader `json:"leader,omitempty"`
}
