// Package pdapi holds the JSON types of the PD HTTP API (tikv/pd `server/api`, `pkg/response`, kvproto
// `metapb`/`pdpb` as PD renders them) that the operator reads and writes. Field names, `omitempty` and the
// `,string` encodings follow real PD byte for byte, because these types are shared by the operator's PD
// client and the TiDB cluster simulator: they are the contract, and nothing else is shared (no logic).
package pdapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MemberHealth is one element of `GET /pd/api/v1/health` (PD `api.Health`).
type MemberHealth struct {
	Name       string   `json:"name"`
	MemberID   uint64   `json:"member_id"`
	ClientUrls []string `json:"client_urls"`
	Health     bool     `json:"health"`
}

// HealthInfo is the decoded `GET /pd/api/v1/health` body, a bare JSON array of MemberHealth.
type HealthInfo []MemberHealth

// Member is a PD member as rendered by `GET /pd/api/v1/leader` and inside `GET /pd/api/v1/members`
// (kvproto `pdpb.Member`; every field is omitted when zero).
type Member struct {
	Name           string   `json:"name,omitempty"`
	MemberID       uint64   `json:"member_id,omitempty"`
	PeerUrls       []string `json:"peer_urls,omitempty"`
	ClientUrls     []string `json:"client_urls,omitempty"`
	LeaderPriority int32    `json:"leader_priority,omitempty"`
	DeployPath     string   `json:"deploy_path,omitempty"`
	BinaryVersion  string   `json:"binary_version,omitempty"`
	GitHash        string   `json:"git_hash,omitempty"`
	DcLocation     string   `json:"dc_location,omitempty"`
}

// ResponseHeader is the `header` of PD gRPC-derived responses (kvproto `pdpb.ResponseHeader`).
type ResponseHeader struct {
	ClusterID uint64         `json:"cluster_id,omitempty"`
	Error     *ResponseError `json:"error,omitempty"`
}

// ResponseError is the `header.error` of PD gRPC-derived responses (kvproto `pdpb.Error`).
type ResponseError struct {
	Type    int32  `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
}

// MembersInfo is the body of `GET /pd/api/v1/members` (kvproto `pdpb.GetMembersResponse`).
type MembersInfo struct {
	Header     *ResponseHeader `json:"header,omitempty"`
	Members    []*Member       `json:"members,omitempty"`
	Leader     *Member         `json:"leader,omitempty"`
	EtcdLeader *Member         `json:"etcd_leader,omitempty"`
}

// Cluster is the body of `GET /pd/api/v1/cluster` (kvproto `metapb.Cluster`).
type Cluster struct {
	ID           uint64 `json:"id,omitempty"`
	MaxPeerCount uint32 `json:"max_peer_count,omitempty"`
}

// ClusterStatus is the body of `GET /pd/api/v1/cluster/status`.
type ClusterStatus struct {
	RaftBootstrapTime time.Time `json:"raft_bootstrap_time,omitempty"`
	IsInitialized     bool      `json:"is_initialized"`
	ReplicationStatus string    `json:"replication_status,omitempty"`
}

// StoreState is the persisted store state (kvproto `metapb.StoreState`), rendered as a number and omitted
// when Up (0). `GET /pd/api/v1/stores?state=N` filters on it.
type StoreState int32

// Store states as PD numbers them.
const (
	StoreStateUp        StoreState = 0
	StoreStateOffline   StoreState = 1
	StoreStateTombstone StoreState = 2
)

// NodeState is the newer store life-cycle state (kvproto `metapb.NodeState`), rendered as a number.
type NodeState int32

// Node states as PD numbers them.
const (
	NodeStatePreparing NodeState = 0
	NodeStateServing   NodeState = 1
	NodeStateRemoving  NodeState = 2
	NodeStateRemoved   NodeState = 3
)

// Store state names as PD renders them in `store.state_name`. Down and Disconnected are not persisted
// states: PD derives them for an Up store from the time since its last heartbeat.
const (
	StoreStateNameUp           = "Up"
	StoreStateNameOffline      = "Offline"
	StoreStateNameTombstone    = "Tombstone"
	StoreStateNameDown         = "Down"
	StoreStateNameDisconnected = "Disconnected"
)

// StoreLabel is one `store.labels` element (kvproto `metapb.StoreLabel`).
type StoreLabel struct {
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
}

// MetaStore is the `store` object of a StoreInfo: kvproto `metapb.Store` (all fields omitempty) plus
// PD's `state_name`.
type MetaStore struct {
	ID                  uint64        `json:"id,omitempty"`
	Address             string        `json:"address,omitempty"`
	State               StoreState    `json:"state,omitempty"`
	Labels              []*StoreLabel `json:"labels,omitempty"`
	Version             string        `json:"version,omitempty"`
	PeerAddress         string        `json:"peer_address,omitempty"`
	StatusAddress       string        `json:"status_address,omitempty"`
	GitHash             string        `json:"git_hash,omitempty"`
	StartTimestamp      int64         `json:"start_timestamp,omitempty"`
	DeployPath          string        `json:"deploy_path,omitempty"`
	LastHeartbeat       int64         `json:"last_heartbeat,omitempty"`
	PhysicallyDestroyed bool          `json:"physically_destroyed,omitempty"`
	NodeState           NodeState     `json:"node_state,omitempty"`
	StateName           string        `json:"state_name"`
}

// SlowTrend is `status.slow_trend` of a store (PD `response.SlowTrend`).
type SlowTrend struct {
	CauseValue  float64 `json:"cause_value"`
	CauseRate   float64 `json:"cause_rate"`
	ResultValue float64 `json:"result_value"`
	ResultRate  float64 `json:"result_rate"`
}

// StoreStatus is the `status` object of a StoreInfo (PD `response.StoreStatus`).
type StoreStatus struct {
	Capacity               ByteSize   `json:"capacity"`
	Available              ByteSize   `json:"available"`
	UsedSize               ByteSize   `json:"used_size"`
	LeaderCount            int        `json:"leader_count"`
	LeaderWeight           float64    `json:"leader_weight"`
	LeaderScore            float64    `json:"leader_score"`
	LeaderSize             int64      `json:"leader_size"`
	RegionCount            int        `json:"region_count"`
	RegionWeight           float64    `json:"region_weight"`
	RegionScore            float64    `json:"region_score"`
	RegionSize             int64      `json:"region_size"`
	LearnerCount           int        `json:"learner_count,omitempty"`
	WitnessCount           int        `json:"witness_count,omitempty"`
	PendingPeerCount       int        `json:"pending_peer_count,omitempty"`
	SlowScore              uint64     `json:"slow_score,omitempty"`
	SlowTrend              *SlowTrend `json:"slow_trend,omitempty"`
	SendingSnapCount       uint32     `json:"sending_snap_count,omitempty"`
	ReceivingSnapCount     uint32     `json:"receiving_snap_count,omitempty"`
	IsBusy                 bool       `json:"is_busy,omitempty"`
	StartTS                *time.Time `json:"start_ts,omitempty"`
	LastHeartbeatTS        *time.Time `json:"last_heartbeat_ts,omitempty"`
	Uptime                 *Duration  `json:"uptime,omitempty"`
	PauseLeaderTransferIn  bool       `json:"pause_leader_transfer_in,omitempty"`
	PauseLeaderTransferOut bool       `json:"pause_leader_transfer_out,omitempty"`
}

// StoreInfo is the body of `GET /pd/api/v1/store/{id}` and one element of StoresInfo.
type StoreInfo struct {
	Store  *MetaStore   `json:"store"`
	Status *StoreStatus `json:"status"`
}

// StoresInfo is the body of `GET /pd/api/v1/stores` (Up and Offline stores by default; `?state=2` lists
// Tombstone stores).
type StoresInfo struct {
	Count  int          `json:"count"`
	Stores []*StoreInfo `json:"stores"`
}

// ReplicationConfig is `GET /pd/api/v1/config/replicate` and the `replication` section of Config.
// `POST /pd/api/v1/config/replicate` decodes a partial object of the same shape over the current value, so
// the boolean fields must be sent as JSON strings (`"enable-placement-rules": "true"`): PD rejects a bare
// `true` with 500 and an errcode object ("json: invalid use of ,string struct tag …").
type ReplicationConfig struct {
	MaxReplicas               uint64      `json:"max-replicas"`
	LocationLabels            StringSlice `json:"location-labels"`
	StrictlyMatchLabel        bool        `json:"strictly-match-label,string"`
	EnablePlacementRules      bool        `json:"enable-placement-rules,string"`
	EnablePlacementRulesCache bool        `json:"enable-placement-rules-cache,string"`
	IsolationLevel            string      `json:"isolation-level"`
}

// ScheduleConfig is the subset of the `schedule` section of Config that the operator and the simulator use.
// Unknown fields of a real PD response are ignored when decoding.
type ScheduleConfig struct {
	MaxSnapshotCount       uint64   `json:"max-snapshot-count"`
	MaxPendingPeerCount    uint64   `json:"max-pending-peer-count"`
	MaxMergeRegionSize     uint64   `json:"max-merge-region-size"`
	MaxMergeRegionKeys     uint64   `json:"max-merge-region-keys"`
	SplitMergeInterval     Duration `json:"split-merge-interval"`
	PatrolRegionInterval   Duration `json:"patrol-region-interval"`
	MaxStoreDownTime       Duration `json:"max-store-down-time"`
	MaxStorePreparingTime  Duration `json:"max-store-preparing-time"`
	LeaderScheduleLimit    uint64   `json:"leader-schedule-limit"`
	LeaderSchedulePolicy   string   `json:"leader-schedule-policy"`
	RegionScheduleLimit    uint64   `json:"region-schedule-limit"`
	ReplicaScheduleLimit   uint64   `json:"replica-schedule-limit"`
	MergeScheduleLimit     uint64   `json:"merge-schedule-limit"`
	HotRegionScheduleLimit uint64   `json:"hot-region-schedule-limit"`
}

// PDServerConfig is the subset of the `pd-server` section of Config that the simulator renders.
type PDServerConfig struct {
	UseRegionStorage bool     `json:"use-region-storage,string"`
	MaxGapResetTS    Duration `json:"max-gap-reset-ts"`
	KeyType          string   `json:"key-type"`
	MetricStorage    string   `json:"metric-storage"`
	DashboardAddress string   `json:"dashboard-address"`
}

// Config is the subset of `GET /pd/api/v1/config` (PD `config.Config`) that the operator reads:
// `replication.max-replicas`, `replication.location-labels`, `replication.enable-placement-rules`, and
// `schedule.max-store-down-time`. Unknown fields of a real PD response are ignored when decoding.
type Config struct {
	ClientUrls          string            `json:"client-urls"`
	PeerUrls            string            `json:"peer-urls"`
	AdvertiseClientUrls string            `json:"advertise-client-urls"`
	AdvertisePeerUrls   string            `json:"advertise-peer-urls"`
	Name                string            `json:"name"`
	DataDir             string            `json:"data-dir"`
	InitialCluster      string            `json:"initial-cluster"`
	InitialClusterState string            `json:"initial-cluster-state"`
	Join                string            `json:"join"`
	LeaderLease         int64             `json:"lease"`
	Schedule            ScheduleConfig    `json:"schedule"`
	Replication         ReplicationConfig `json:"replication"`
	PDServerCfg         PDServerConfig    `json:"pd-server"`
	ClusterVersion      string            `json:"cluster-version"`
}

// SchedulerRequest is the body of `POST /pd/api/v1/schedulers`; StoreID is only used by
// `evict-leader-scheduler` and `grant-leader-scheduler`.
type SchedulerRequest struct {
	Name    string `json:"name"`
	StoreID uint64 `json:"store_id,omitempty"`
}

// KeyRange is one range of an evict-leader scheduler's `store-id-ranges`.
type KeyRange struct {
	StartKey string `json:"start-key"`
	EndKey   string `json:"end-key"`
}

// EvictLeaderSchedulerConfig is the body of `GET /pd/api/v1/scheduler-config/evict-leader-scheduler/list`
// in PD versions that keep every evicted store in one `evict-leader-scheduler`; the keys of StoreIDRanges
// are store IDs in decimal.
type EvictLeaderSchedulerConfig struct {
	StoreIDRanges map[string][]KeyRange `json:"store-id-ranges"`
	Batch         int                   `json:"batch,omitempty"`
}

// ReadyStatus is the body of `GET /pd/api/v2/ready?verbose` (PD ≥ 8.5.2; without `verbose` the body is
// empty and only the status code, 200 or 500, carries the answer).
type ReadyStatus struct {
	RegionLoaded bool `json:"region_loaded"`
}

// ErrorCodeJSON is the body PD sends with 400 for invalid input (errcode `JSONFormat`, e.g. a malformed
// JSON body or store ID); every other PD error body is a bare JSON string such as
// `"[PD:core:ErrStoreNotFound]store 5 not found"`.
type ErrorCodeJSON struct {
	Code      string          `json:"code"`
	Msg       string          `json:"msg"`
	Data      json.RawMessage `json:"data"`
	Operation string          `json:"operation,omitempty"`
}

// StringSlice is a list that PD renders as one comma-separated JSON string (PD `typeutil.StringSlice`),
// e.g. `"location-labels": "zone,host"`; the empty list is `""`.
type StringSlice []string

// MarshalJSON renders the list as one comma-joined JSON string.
func (s StringSlice) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(strings.Join(s, ","))), nil
}

// UnmarshalJSON reads a comma-separated JSON string; it errors when data is not a JSON string.
func (s *StringSlice) UnmarshalJSON(data []byte) error {
	text, err := strconv.Unquote(string(data))
	if err != nil {
		return fmt.Errorf("string slice %s: %w", data, err)
	}
	if text == "" {
		*s = StringSlice{}
		return nil
	}
	*s = strings.Split(text, ",")
	return nil
}

// Duration is a time.Duration that PD renders as a Go duration string, e.g. `"30m0s"` (PD
// `typeutil.Duration`).
type Duration struct {
	time.Duration
}

// NewDuration wraps d.
func NewDuration(d time.Duration) Duration { return Duration{Duration: d} }

// MarshalJSON renders the duration as a quoted Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(d.String())), nil
}

// UnmarshalJSON reads a quoted Go duration string; it errors on anything else.
func (d *Duration) UnmarshalJSON(data []byte) error {
	text, err := strconv.Unquote(string(data))
	if err != nil {
		return fmt.Errorf("duration %s: %w", data, err)
	}
	parsed, err := time.ParseDuration(text)
	if err != nil {
		return fmt.Errorf("duration %s: %w", data, err)
	}
	d.Duration = parsed
	return nil
}

// ByteSize is a byte count that PD renders as a binary-unit string with four significant digits, e.g.
// `"100GiB"` or `"1.953TiB"` (PD `typeutil.ByteSize`, docker `units.BytesSize`).
type ByteSize uint64

var binaryUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}

// String renders the size as PD does, e.g. "94.5GiB".
func (b ByteSize) String() string {
	size, unit := float64(b), 0
	for size >= 1024 && unit < len(binaryUnits)-1 {
		size /= 1024
		unit++
	}
	return fmt.Sprintf("%.4g%s", size, binaryUnits[unit])
}

// MarshalJSON renders the size as a quoted binary-unit string.
func (b ByteSize) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(b.String())), nil
}

// UnmarshalJSON reads a quoted size such as "100GiB", "512MB" or "1024" (every unit is binary, as in PD);
// it errors on a malformed size or one that overflows uint64.
func (b *ByteSize) UnmarshalJSON(data []byte) error {
	text, err := strconv.Unquote(string(data))
	if err != nil {
		return fmt.Errorf("byte size %s: %w", data, err)
	}
	size, err := ParseByteSize(text)
	if err != nil {
		return err
	}
	*b = size
	return nil
}

// ParseByteSize parses "100GiB", "1.5 TB", "512k" or "1024" with binary multipliers for every unit suffix
// (b, k/kb/kib, m/mb/mib, ... as docker `units.RAMInBytes`); it errors on anything else.
func ParseByteSize(text string) (ByteSize, error) {
	s := strings.TrimSpace(text)
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
		end++
	}
	number, err := strconv.ParseFloat(s[:end], 64)
	if err != nil || number < 0 {
		return 0, fmt.Errorf("invalid byte size %q", text)
	}
	exp, ok := unitExponent(strings.ToLower(strings.TrimSpace(s[end:])))
	if !ok {
		return 0, fmt.Errorf("invalid byte size %q: unknown unit", text)
	}
	value := number * math.Pow(1024, float64(exp))
	if value >= math.MaxUint64 {
		return 0, fmt.Errorf("invalid byte size %q: overflows uint64", text)
	}
	return ByteSize(value), nil
}

func unitExponent(unit string) (int, bool) {
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i")
	if unit == "" {
		return 0, true
	}
	exp := strings.Index("kmgtpezy", unit)
	if len(unit) != 1 || exp < 0 {
		return 0, false
	}
	return exp + 1, true
}
