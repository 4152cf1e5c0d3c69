package pdapi

// Placement rules as PD's HTTP API renders them (tikv/pd `pkg/schedule/placement` Rule and
// LabelConstraint, exported by `GET /pd/api/v1/config/rules/group/{group}`), and the facts of the
// TiFlash engine the operator and the simulator share: like the rest of this package's types, these are
// the contract, not logic.

// Placement rule groups and store labels.
const (
	// PlacementGroupTiFlash is the rule group TiDB writes one rule per table (or partition) with TiFlash
	// replicas into: `ALTER TABLE t SET TIFLASH REPLICA n` makes rule "table-<id>-r" with count n.
	PlacementGroupTiFlash = "tiflash"
	// PlacementGroupPD is the group of PD's own default rule ("pd"/"default", count max-replicas).
	PlacementGroupPD = "pd"
	// StoreLabelEngine is the store label a TiFlash store registers with (value EngineTiFlash); PD reserves
	// it: `POST /pd/api/v1/store/{id}/label` may not set it.
	StoreLabelEngine = "engine"
	// EngineTiFlash is the value of StoreLabelEngine on a TiFlash store; TiKV stores carry no engine label.
	EngineTiFlash = "tiflash"
)

// Peer roles of a placement rule (PD `placement.PeerRoleType`).
const (
	PeerRoleVoter    = "voter"
	PeerRoleLeader   = "leader"
	PeerRoleFollower = "follower"
	PeerRoleLearner  = "learner"
)

// Label constraint operators (PD `placement.LabelConstraintOp`).
const (
	LabelConstraintIn        = "in"
	LabelConstraintNotIn     = "notIn"
	LabelConstraintExists    = "exists"
	LabelConstraintNotExists = "notExists"
)

// LabelConstraint is one `label_constraints` element of a PlacementRule: stores whose label Key matches
// Op over Values may hold the rule's peers (PD `placement.LabelConstraint`, every field omitempty).
type LabelConstraint struct {
	Key    string   `json:"key,omitempty"`
	Op     string   `json:"op,omitempty"`
	Values []string `json:"values,omitempty"`
}

// PlacementRule is one element of `GET /pd/api/v1/config/rules/group/{group}` (PD `placement.Rule`).
// StartKeyHex and EndKeyHex are hex-encoded memcomparable keys; Count is how many peers of Role the
// regions in the range get on stores matching LabelConstraints. A TiFlash rule written by TiDB looks like
// {"group_id":"tiflash","id":"table-45-r","index":120,"start_key":"7480…","end_key":"7480…",
// "role":"learner","is_witness":false,"count":2,"label_constraints":[{"key":"engine","op":"in",
// "values":["tiflash"]}]}.
type PlacementRule struct {
	GroupID          string            `json:"group_id"`
	ID               string            `json:"id"`
	Index            int               `json:"index,omitempty"`
	Override         bool              `json:"override,omitempty"`
	StartKeyHex      string            `json:"start_key"`
	EndKeyHex        string            `json:"end_key"`
	Role             string            `json:"role"`
	IsWitness        bool              `json:"is_witness"`
	Count            int               `json:"count"`
	LabelConstraints []LabelConstraint `json:"label_constraints,omitempty"`
	LocationLabels   []string          `json:"location_labels,omitempty"`
	IsolationLevel   string            `json:"isolation_level,omitempty"`
	Version          uint64            `json:"version,omitempty"`
	CreateTimestamp  uint64            `json:"create_timestamp,omitempty"`
}
