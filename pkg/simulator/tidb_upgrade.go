package simulator

import (
	"encoding/json"
	"net/http"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// tidbUpgrade is the cluster's smooth-upgrade state as TiDB keeps it (one global state in TiKV, so every
// server answers alike) and the switch requests received, oldest first.
type tidbUpgrade struct {
	upgrading bool
	calls     []api.TiDBUpgradeCall
}

// maxUpgradeCalls bounds the calls kept.
const maxUpgradeCalls = 64

// handleTiDBUpgrade is TiDB's `/upgrade/{op}` (pkg/server/handler/upgrade_handler.go): POST only, else 400
// "This API only support POST method"; start and finish answer 200 with the JSON string "success!", or the
// duplicated-operation sentence when the cluster already is in that state; another op is 400 "wrong
// operation:<op>". Starting needs the cluster to serve (a session on TiKV), else 400 as TiDB's session error.
// Every request is recorded with the version each TiDB pod ran at that moment.
func handleTiDBUpgrade(w http.ResponseWriter, r *http.Request, st *reqState) {
	c, op := st.c, r.PathValue("op")
	answer, status := c.switchUpgrade(r.Method, op)
	call := api.TiDBUpgradeCall{Seq: len(c.tidbUpgrade.calls) + 1, At: st.now, Method: r.Method, Op: op, Pod: st.t.pod,
		Status: status, Answer: answer, Versions: map[string]string{}}
	if n := len(c.tidbUpgrade.calls); n > 0 {
		call.Seq = c.tidbUpgrade.calls[n-1].Seq + 1
	}
	for _, p := range c.podsOf(ComponentTiDB) {
		call.Versions[p.Name] = c.version(p)
	}
	c.tidbUpgrade.calls = append(c.tidbUpgrade.calls, call)
	if over := len(c.tidbUpgrade.calls) - maxUpgradeCalls; over > 0 {
		c.tidbUpgrade.calls = c.tidbUpgrade.calls[over:]
	}
	c.log.Info("TiDB upgrade switch", "op", op, "pod", st.t.pod, "status", status, "answer", answer)
	if status != http.StatusOK {
		writeText(w, status, answer)
		return
	}
	body, _ := json.Marshal(answer)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// switchUpgrade applies one request to the cluster's upgrading state and returns TiDB's answer.
func (c *Cluster) switchUpgrade(method, op string) (string, int) {
	if method != http.MethodPost {
		return "This API only support POST method", http.StatusBadRequest
	}
	switch op {
	case "start":
		if ok, why := c.tidbStorageReachable(); !ok {
			return "[tikv:9001]PD server timeout: " + why, http.StatusBadRequest
		}
		if c.tidbUpgrade.upgrading {
			return "It's a duplicated operation and the cluster is already in upgrading state.", http.StatusOK
		}
		c.tidbUpgrade.upgrading = true
	case "finish":
		if !c.tidbUpgrade.upgrading {
			return "It's a duplicated operation and the cluster is already in normal state.", http.StatusOK
		}
		c.tidbUpgrade.upgrading = false
	default:
		return "wrong operation:" + op, http.StatusBadRequest
	}
	return "success!", http.StatusOK
}

// tidbUpgradeState is the admin view of the smooth-upgrade state.
func (c *Cluster) tidbUpgradeState() api.TiDBUpgrade {
	return api.TiDBUpgrade{Upgrading: c.tidbUpgrade.upgrading, Calls: append([]api.TiDBUpgradeCall(nil), c.tidbUpgrade.calls...)}
}
