// Package api holds the JSON types of the simulator's admin API (`/sim/v1/...`), shared by the simulator
// and its Go client in pkg/simulator/client. They describe the simulated state and the injected faults;
// they are not PD types (those live in pkg/pdapi).
package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// PathPrefix is the prefix of every admin endpoint.
const PathPrefix = "/sim/v1"

// ClusterSummary is one element of `GET /sim/v1/clusters`.
type ClusterSummary struct {
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	ClusterID    uint64 `json:"clusterID"`
	Bootstrapped bool   `json:"bootstrapped"`
	Leader       string `json:"leader,omitempty"`
	PDMembers    int    `json:"pdMembers"`
	Stores       int    `json:"stores"`
	TiDBServers  int    `json:"tidbServers"`
	// TiCDCCaptures counts the registered TiCDC captures, TiProxyServers the TiProxy pods, PumpNodes the
	// entries of the Pump registry.
	TiCDCCaptures  int `json:"ticdcCaptures"`
	TiProxyServers int `json:"tiproxyServers"`
	PumpNodes      int `json:"pumpNodes"`
}

// ClusterState is `GET /sim/v1/clusters/{namespace}/{name}`: everything the simulator holds for one cluster.
type ClusterState struct {
	Namespace     string        `json:"namespace"`
	Name          string        `json:"name"`
	ClusterID     uint64        `json:"clusterID"`
	Bootstrapped  bool          `json:"bootstrapped"`
	PDUnreachable bool          `json:"pdUnreachable"`
	Leader        string        `json:"leader,omitempty"`
	Members       []Member      `json:"members"`
	Stores        []Store       `json:"stores"`
	TiDBServers   []TiDBServer  `json:"tidbServers"`
	Schedulers    []string      `json:"schedulers"`
	Config        ClusterConfig `json:"config"`
	Faults        []Fault       `json:"faults"`
	// TiFlashReplicas are the tables with TiFlash replicas (placement rules of group "tiflash").
	TiFlashReplicas []TiFlashReplica `json:"tiflashReplicas"`
	// Captures are the registered TiCDC captures, oldest first.
	Captures []Capture `json:"captures"`
	// TiProxyServers are the TiProxy pods.
	TiProxyServers []TiProxyServer `json:"tiproxyServers"`
	// PumpNodes are the entries of the Pump registry, by node ID.
	PumpNodes []PumpNode `json:"pumpNodes"`
	// LeaderChanges are the latest changes of the PD leader, oldest first, each with its cause, so a test
	// tells a transfer asked for through PD's API from an election after the leader's pod stopped.
	LeaderChanges []LeaderChange `json:"leaderChanges"`
	// TLS says whether the cluster's endpoints speak TLS only and counts the requests they received.
	TLS TLSStats `json:"tls"`
	// TiDBUpgrade is TiDB's smooth-upgrade state and the `/upgrade/{op}` requests received.
	TiDBUpgrade TiDBUpgrade `json:"tidbUpgrade"`
}

// TiDBUpgrade is the cluster's smooth-upgrade state: Upgrading between an accepted `/upgrade/start` and
// `/upgrade/finish` (TiDB pauses user DDL meanwhile), and the latest 64 switch requests, oldest first.
type TiDBUpgrade struct {
	Upgrading bool              `json:"upgrading"`
	Calls     []TiDBUpgradeCall `json:"calls"`
}

// TiDBUpgradeCall is one `/upgrade/{op}` request: which pod got it, TiDB's answer, and the version every
// TiDB pod ran at that moment, so a test can tell a start came before the first server restarted onto
// the new version and a finish after the last.
type TiDBUpgradeCall struct {
	Seq      int               `json:"seq"`
	At       time.Time         `json:"at"`
	Method   string            `json:"method"`
	Op       string            `json:"op"`
	Pod      string            `json:"pod"`
	Status   int               `json:"status"`
	Answer   string            `json:"answer"`
	Versions map[string]string `json:"versions"`
}

// TLSStats are the TLS facts of one simulated cluster.
type TLSStats struct {
	// Enabled: the TidbCluster has spec.tlsCluster.enabled, so its endpoints refuse plain HTTP.
	Enabled bool `json:"enabled"`
	// Requests counts the requests served over TLS, by component ("pd", "tikv", "tidb", ...); each came
	// with a client certificate the simulator's CA signed (the handshake refuses any other).
	Requests map[string]uint64 `json:"requests"`
	// PlainRefused counts plain HTTP requests refused because the cluster speaks TLS only.
	PlainRefused uint64 `json:"plainRefused"`
}

// Causes of a PD leader change (LeaderChange.Cause).
const (
	// LeaderCauseTransfer: `POST /pd/api/v1/leader/transfer/{name}` moved leadership.
	LeaderCauseTransfer = "transfer"
	// LeaderCauseElection: the members elected a leader because there was none or the leader stopped
	// being healthy (its pod restarted, was deleted or marked unhealthy).
	LeaderCauseElection = "election"
	// LeaderCauseQuorumLost: a majority of the members is unhealthy; there is no leader.
	LeaderCauseQuorumLost = "quorum-lost"
	// LeaderCauseMemberRemoved: the leader was deleted from the members.
	LeaderCauseMemberRemoved = "member-removed"
)

// LeaderChange is one change of the PD leader. Seq numbers every change of the cluster from 1; At is the
// simulated time it happened; From or To is "" when there was or is no leader.
type LeaderChange struct {
	Seq   uint64    `json:"seq"`
	At    time.Time `json:"at"`
	From  string    `json:"from"`
	To    string    `json:"to"`
	Cause string    `json:"cause"`
}

// Member is a simulated PD member.
type Member struct {
	Name            string `json:"name"`
	MemberID        uint64 `json:"memberID"`
	ClientURL       string `json:"clientURL"`
	PodReady        bool   `json:"podReady"`
	Healthy         bool   `json:"healthy"`
	ForcedUnhealthy bool   `json:"forcedUnhealthy"`
	Leader          bool   `json:"leader"`
	// StartedAt is when the simulator saw the member's current pd-server process (pod UID and restart
	// count) start; nil while it does not run.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// ReadySince is when the current process began answering `GET /pd/api/v2/ready` with 200 (cluster
	// bootstrapped and regions loaded); nil while it does not.
	ReadySince *time.Time `json:"readySince,omitempty"`
}

// Store is a simulated TiKV or TiFlash store. StateName is what PD reports (Up, Disconnected, Down,
// Offline, Tombstone).
type Store struct {
	ID      uint64 `json:"id"`
	PodName string `json:"podName"`
	// Engine is "tikv" or "tiflash".
	Engine      string            `json:"engine"`
	Address     string            `json:"address"`
	StateName   string            `json:"stateName"`
	LeaderCount int               `json:"leaderCount"`
	RegionCount int               `json:"regionCount"`
	ForcedDown  bool              `json:"forcedDown"`
	Evicting    bool              `json:"evicting"`
	Labels      map[string]string `json:"labels,omitempty"`
	// LabelWrites counts the accepted `POST /pd/api/v1/store/{id}/label` requests for the store.
	LabelWrites int `json:"labelWrites,omitempty"`
	// LostLeaders is how many leaders the store held the last time it stopped heartbeating while
	// holding some (its pod deleted or not Ready); 0 when it never did, as after a leader eviction.
	LostLeaders int `json:"lostLeaders,omitempty"`
}

// TiDBServer is a simulated TiDB server (one per TiDB pod).
type TiDBServer struct {
	Name    string `json:"name"`
	Ready   bool   `json:"ready"`
	Healthy bool   `json:"healthy"`
	Owner   bool   `json:"owner"`
	// Labels are the server labels the running process holds (set through TiDB's POST /labels).
	Labels map[string]string `json:"labels,omitempty"`
	// LabelWrites counts the accepted `POST /labels` requests of the pod's TiDB servers.
	LabelWrites int `json:"labelWrites,omitempty"`
}

// Capture is a simulated TiCDC capture: one run of a TiCDC pod's process, registered while the pod runs
// and PD is reachable. Its ID changes whenever the process starts again.
type Capture struct {
	PodName string `json:"podName"`
	ID      string `json:"id"`
	Address string `json:"address"`
	Version string `json:"version"`
	Owner   bool   `json:"owner"`
	// Tables is how many of the cluster's tables the capture replicates.
	Tables int `json:"tables"`
	// Draining is set while the capture is the drain target (`PUT /api/v1/captures/drain`).
	Draining bool `json:"draining"`
	// ForcedUnhealthy is set by `PUT …/captures/{pod}/unhealthy`.
	ForcedUnhealthy bool `json:"forcedUnhealthy"`
}

// TiProxyServer is a simulated TiProxy server (one per TiProxy pod). Healthy means `GET /api/debug/health`
// answers 200: the pod runs and is not marked unhealthy.
type TiProxyServer struct {
	Name            string `json:"name"`
	Running         bool   `json:"running"`
	Healthy         bool   `json:"healthy"`
	ForcedUnhealthy bool   `json:"forcedUnhealthy"`
}

// PumpNode is one entry of the Pump (TiDB binlog) registry that PD's etcd holds, plus what the simulator
// knows of the pod's Pump process. Entries are never removed: a pump whose pod is gone keeps its last state.
type PumpNode struct {
	// PodName is the pod that registered the node; NodeID is `<pod>:8250`, Host the advertised address.
	PodName string `json:"podName"`
	NodeID  string `json:"nodeID"`
	Host    string `json:"host"`
	// State is the registry's: online, pausing, paused, closing or offline.
	State       string `json:"state"`
	MaxCommitTS int64  `json:"maxCommitTS"`
	UpdateTS    int64  `json:"updateTS"`
	// Serving is set while the pod's Pump process answers on port 8250.
	Serving bool `json:"serving"`
	// ProcessState is the serving process's own state (online, or closing after a close request: the
	// registry says online until the pump is offline); empty when it does not serve.
	ProcessState string `json:"processState,omitempty"`
}

// PumpNodeStateUpdate is the body of `PUT /sim/v1/clusters/{namespace}/{name}/pump-nodes/{nodeID}/state`:
// the registry state to write, as `binlogctl -cmd update-pump -state <state>` does.
type PumpNodeStateUpdate struct {
	State string `json:"state"`
}

// ClusterConfig is the per-cluster configuration the simulator uses.
type ClusterConfig struct {
	MaxReplicas          uint64   `json:"maxReplicas"`
	RegionCount          int      `json:"regionCount"`
	LocationLabels       []string `json:"locationLabels"`
	EnablePlacementRules bool     `json:"enablePlacementRules"`
	// TiCDCTables is the number of tables the TiCDC captures replicate.
	TiCDCTables int `json:"ticdcTables"`
}

// ClusterConfigUpdate is the body of `PUT /sim/v1/clusters/{namespace}/{name}/config`; nil fields are kept.
type ClusterConfigUpdate struct {
	MaxReplicas *uint64 `json:"maxReplicas,omitempty"`
	RegionCount *int    `json:"regionCount,omitempty"`
	TiCDCTables *int    `json:"ticdcTables,omitempty"`
}

// TiFlashReplica is one element of `GET /sim/v1/clusters/{namespace}/{name}/tiflash-replicas`: the TiFlash
// replica count of a table, which PD holds as the placement rule RuleID ("table-<tableID>-r") of group
// "tiflash", as TiDB writes it for `ALTER TABLE … SET TIFLASH REPLICA <count>`.
type TiFlashReplica struct {
	TableID int64  `json:"tableID"`
	Count   int    `json:"count"`
	RuleID  string `json:"ruleID"`
}

// TiFlashReplicaUpdate is the body of `PUT /sim/v1/clusters/{namespace}/{name}/tiflash-replicas/{tableID}`:
// the table's TiFlash replica count; 0 removes its rule.
type TiFlashReplicaUpdate struct {
	Count int `json:"count"`
}

// FaultKind says what a fault does to a matching request.
type FaultKind string

// Fault kinds.
const (
	// FaultError answers with Status (a 5xx) and Body instead of the simulated API.
	FaultError FaultKind = "error"
	// FaultLatency delays the request by Delay, then serves it normally.
	FaultLatency FaultKind = "latency"
	// FaultDrop hijacks the connection and closes it without an answer.
	FaultDrop FaultKind = "drop"
)

// Fault is a rule injected into one cluster's simulated APIs (`POST /sim/v1/clusters/{ns}/{name}/faults`).
// It matches requests whose method equals Method (any if empty), whose path starts with PathPrefix (any if
// empty) and whose component is Component (pd, tikv, tidb, tiflash, ticdc, tiproxy or pump; any if
// empty). Times > 0 limits how many requests it hits before it expires; 0 keeps it until deleted. ID and
// Hits are set by the simulator.
type Fault struct {
	ID         string    `json:"id,omitempty"`
	Kind       FaultKind `json:"kind"`
	Method     string    `json:"method,omitempty"`
	PathPrefix string    `json:"pathPrefix,omitempty"`
	Component  string    `json:"component,omitempty"`
	Status     int       `json:"status,omitempty"`
	Body       string    `json:"body,omitempty"`
	Delay      Duration  `json:"delay,omitempty"`
	Times      int       `json:"times,omitempty"`
	Hits       int       `json:"hits,omitempty"`
}

// Timings are the simulator-wide durations of the state machine (`GET|PUT /sim/v1/timings`).
type Timings struct {
	// MaxStoreDownTime is how long a store must miss heartbeats before PD reports it Down.
	MaxStoreDownTime Duration `json:"maxStoreDownTime"`
	// StoreDisconnectTime is how long a store must miss heartbeats before PD reports it Disconnected.
	StoreDisconnectTime Duration `json:"storeDisconnectTime"`
	// RegionMigrationTime is how long an Offline store needs, with enough Up stores, to become Tombstone.
	RegionMigrationTime Duration `json:"regionMigrationTime"`
	// LeaderDrainTime is how long an evict-leader scheduler (or going Offline) takes to move all leaders off.
	LeaderDrainTime Duration `json:"leaderDrainTime"`
	// LeaderReturnTime is how long balancing takes to give a store its share of leaders back.
	LeaderReturnTime Duration `json:"leaderReturnTime"`
	// TiCDCDrainTime is how long a drained TiCDC capture's tables take to move to the other captures (and
	// balancing to give a capture its share of tables).
	TiCDCDrainTime Duration `json:"ticdcDrainTime"`
	// PumpOfflineTime is how long a Pump told to close takes, while PD is reachable, to register offline
	// and exit.
	PumpOfflineTime Duration `json:"pumpOfflineTime"`
	// PDReadyDelay is how long a PD member takes, after its pod started or the cluster bootstrapped
	// (whichever is later), to answer `GET /pd/api/v2/ready` with 200.
	PDReadyDelay Duration `json:"pdReadyDelay"`
}

// TimingsUpdate is the body of `PUT /sim/v1/timings`; nil fields are kept.
type TimingsUpdate struct {
	MaxStoreDownTime    *Duration `json:"maxStoreDownTime,omitempty"`
	StoreDisconnectTime *Duration `json:"storeDisconnectTime,omitempty"`
	RegionMigrationTime *Duration `json:"regionMigrationTime,omitempty"`
	LeaderDrainTime     *Duration `json:"leaderDrainTime,omitempty"`
	LeaderReturnTime    *Duration `json:"leaderReturnTime,omitempty"`
	TiCDCDrainTime      *Duration `json:"ticdcDrainTime,omitempty"`
	PumpOfflineTime     *Duration `json:"pumpOfflineTime,omitempty"`
	PDReadyDelay        *Duration `json:"pdReadyDelay,omitempty"`
}

// Error is the body of every admin API error answer.
type Error struct {
	Error string `json:"error"`
}

// Duration is a time.Duration written as a Go duration string ("1.5s") in JSON.
type Duration time.Duration

// MarshalJSON writes the duration as a quoted Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

// UnmarshalJSON reads a quoted Go duration string; it errors on anything else.
func (d *Duration) UnmarshalJSON(data []byte) error {
	var text string
	if err := json.Unmarshal(data, &text); err != nil {
		return fmt.Errorf("duration %s: %w", data, err)
	}
	parsed, err := time.ParseDuration(text)
	if err != nil {
		return fmt.Errorf("duration %s: %w", data, err)
	}
	*d = Duration(parsed)
	return nil
}
