package simulator

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// msgPlacementDisabled is PD's 412 answer to a rules API while placement rules are disabled.
const msgPlacementDisabled = "[PD:placement:ErrPlacementDisabled]placement rules feature is disabled"

// tiflashRuleIndex is the index TiDB gives its TiFlash rules (placement.RuleIndexTiFlash).
const tiflashRuleIndex = 120

// tiflashReplica is the TiFlash rule of one table.
type tiflashReplica struct {
	count   int
	version uint64
	created time.Time
}

// rulesOf returns the placement rules of group as PD renders them, sorted by index and ID as PD's rule
// manager does: PD's default rule in group "pd" (count max-replicas, over the whole key space) and one
// learner rule per table with TiFlash replicas in group "tiflash".
func (c *Cluster) rulesOf(group string) []pdapi.PlacementRule {
	var rules []pdapi.PlacementRule
	switch group {
	case pdapi.PlacementGroupPD:
		rules = append(rules, pdapi.PlacementRule{
			GroupID: pdapi.PlacementGroupPD, ID: "default", Role: pdapi.PeerRoleVoter, Count: c.maxReplicas(),
			LocationLabels: append([]string(nil), c.replication.LocationLabels...),
		})
	case pdapi.PlacementGroupTiFlash:
		for _, id := range c.tiflashTableIDs() {
			r := c.tiflashReplicas[id]
			start, end := tableRecordRange(id)
			rules = append(rules, pdapi.PlacementRule{
				GroupID: pdapi.PlacementGroupTiFlash, ID: tiflashRuleID(id), Index: tiflashRuleIndex,
				StartKeyHex: start, EndKeyHex: end, Role: pdapi.PeerRoleLearner, Count: r.count,
				LabelConstraints: []pdapi.LabelConstraint{{
					Key: pdapi.StoreLabelEngine, Op: pdapi.LabelConstraintIn, Values: []string{pdapi.EngineTiFlash},
				}},
				Version: r.version, CreateTimestamp: uint64(max(r.created.Unix(), 0)),
			})
		}
		sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	}
	return rules
}

// tiflashTableIDs returns the tables with TiFlash replicas, ascending.
func (c *Cluster) tiflashTableIDs() []int64 {
	ids := make([]int64, 0, len(c.tiflashReplicas))
	for id := range c.tiflashReplicas {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// tiflashRuleID is the ID TiDB gives the TiFlash rule of a table.
func tiflashRuleID(tableID int64) string { return fmt.Sprintf("table-%d-r", tableID) }

// tableRecordRange returns the hex keys TiDB puts in a table's TiFlash rule: the memcomparable encoding of
// the table's record prefix "t<id>_r" and of the next table's prefix "t<id+1>".
func tableRecordRange(tableID int64) (start, end string) {
	prefix := func(id int64) []byte {
		key := []byte{'t'}
		key = binary.BigEndian.AppendUint64(key, uint64(id)^(1<<63)) //nolint:gosec // sign flip, as TiDB's EncodeInt
		return key
	}
	return hex.EncodeToString(encodeBytes(append(prefix(tableID), '_', 'r'))),
		hex.EncodeToString(encodeBytes(prefix(tableID + 1)))
}

// encodeBytes is TiDB's memcomparable byte encoding: groups of 8 bytes, the last one zero-padded, each
// followed by 0xFF minus its padding.
func encodeBytes(data []byte) []byte {
	out := make([]byte, 0, (len(data)/8+1)*9)
	for i := 0; i <= len(data); i += 8 {
		group := make([]byte, 8)
		n := copy(group, data[i:])
		out = append(out, group...)
		out = append(out, byte(0xFF-(8-n))) //nolint:gosec // 8-n is at most 8
	}
	return out
}

// handlePlacementRulesGroup is `GET /pd/api/v1/config/rules/group/{group}`: 412 while placement rules are
// disabled; otherwise the group's rules, rendered `null` when there is none, as PD does.
func handlePlacementRulesGroup(w http.ResponseWriter, r *http.Request, st *reqState) {
	if !st.c.replication.EnablePlacementRules {
		writeJSON(w, http.StatusPreconditionFailed, msgPlacementDisabled)
		return
	}
	writeJSON(w, http.StatusOK, st.c.rulesOf(r.PathValue("group")))
}

// tiflashReplicaList renders the TiFlash replica counts for the admin API, by table ID.
func (c *Cluster) tiflashReplicaList() []api.TiFlashReplica {
	out := []api.TiFlashReplica{}
	for _, id := range c.tiflashTableIDs() {
		out = append(out, api.TiFlashReplica{TableID: id, Count: c.tiflashReplicas[id].count, RuleID: tiflashRuleID(id)})
	}
	return out
}

// setTiFlashReplicas is what TiDB does to PD for `ALTER TABLE … SET TIFLASH REPLICA count`: it writes (or,
// for 0, deletes) the table's rule. It fails, changing nothing, while placement rules are disabled, because
// PD then refuses the rule (412).
func (c *Cluster) setTiFlashReplicas(tableID int64, count int, now time.Time) error {
	if !c.replication.EnablePlacementRules {
		return fmt.Errorf("PD refuses the TiFlash rule of table %d: %s", tableID, msgPlacementDisabled)
	}
	if count == 0 {
		delete(c.tiflashReplicas, tableID)
		c.log.Info("TiFlash replicas removed", "table", tableID)
		return nil
	}
	r, ok := c.tiflashReplicas[tableID]
	if !ok {
		r = &tiflashReplica{created: now}
		c.tiflashReplicas[tableID] = r
	}
	r.count = count
	r.version++
	c.log.Info("TiFlash replicas set", "table", tableID, "count", count)
	return nil
}

func (s *Server) handleListTiFlashReplicas(w http.ResponseWriter, r *http.Request) {
	var out []api.TiFlashReplica
	if s.onCluster(w, r, false, func(c *Cluster) { out = c.tiflashReplicaList() }) {
		writeJSON(w, http.StatusOK, out)
	}
}

// handleSetTiFlashReplicas is `PUT …/tiflash-replicas/{tableID}` with api.TiFlashReplicaUpdate: 400 for a
// bad table ID or a negative count, 409 while PD's placement rules are disabled, else the table's
// replicas (count 0 removes the rule) and the whole list in answer.
func (s *Server) handleSetTiFlashReplicas(w http.ResponseWriter, r *http.Request) {
	tableID, err := strconv.ParseInt(r.PathValue("tableID"), 10, 64)
	if err != nil || tableID <= 0 {
		adminError(w, http.StatusBadRequest, "table ID %q must be a positive integer", r.PathValue("tableID"))
		return
	}
	var upd api.TiFlashReplicaUpdate
	if err := readJSON(r, &upd); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if upd.Count < 0 {
		adminError(w, http.StatusBadRequest, "count must not be negative, got %d", upd.Count)
		return
	}
	var (
		out    []api.TiFlashReplica
		setErr error
	)
	ok := s.onCluster(w, r, false, func(c *Cluster) {
		now := s.reg.clock.Now()
		if setErr = c.setTiFlashReplicas(tableID, upd.Count, now); setErr == nil {
			c.advanceBy(now, 0)
			out = c.tiflashReplicaList()
		}
	})
	switch {
	case !ok:
	case setErr != nil:
		adminError(w, http.StatusConflict, "%v", setErr)
	default:
		writeJSON(w, http.StatusOK, out)
	}
}
