package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Pump's HTTP API on port 8250 (tidb-binlog pump/server.go, gorilla/mux routes). Only a pod whose Pump
// process runs answers (see pump_nodes.go); the routes the operator uses are simulated:
//   - `GET /status`: every registry entry as this pump reads it, plus a fresh TSO, written by
//     json.Encoder (compact, trailing newline, no Content-Type of its own, so net/http sniffs text/plain);
//     a registry read that fails is still a 200 with the error in ErrMsg;
//   - `PUT /state/{nodeID}/{action}`: pause or close, always 200 with unrolled/render's indented JSON
//     `{"message","code","data"}`, code 200 when applied and 3 when refused.
//
// Another method on those paths answers 405 with no body, any other path 404, as gorilla/mux does.

// pumpNodeStatus is tidb-binlog's node.Status: a registry entry as Pump writes and lists it.
type pumpNodeStatus struct {
	NodeID      string     `json:"nodeId"`
	Addr        string     `json:"host"`
	State       string     `json:"state"`
	IsAlive     bool       `json:"isAlive"`
	Score       int64      `json:"score"`
	Label       *pumpLabel `json:"label"`
	MaxCommitTS int64      `json:"maxCommitTS"`
	UpdateTS    int64      `json:"updateTS"`
}

// pumpLabel is tidb-binlog's node.Label; Pump registers none, so it is always null.
type pumpLabel struct {
	Labels map[string]string `json:"labels"`
}

// pumpBinlogPos is tipb's binlog.Pos; the newer Pump never sets its Checkpoint, so it renders as {}.
type pumpBinlogPos struct {
	Suffix uint64 `json:"suffix,omitempty"`
	Offset int64  `json:"offset,omitempty"`
}

// pumpHTTPStatus is the body of `GET /status` (tidb-binlog pump.HTTPStatus).
type pumpHTTPStatus struct {
	StatusMap  map[string]*pumpNodeStatus `json:"status"`
	CommitTS   int64                      `json:"CommitTS"`
	CheckPoint pumpBinlogPos              `json:"Checkpoint"`
	ErrMsg     string                     `json:"ErrMsg"`
}

// pumpResponse is the body of `PUT /state/{nodeID}/{action}` (tidb-binlog pkg/util.Response).
type pumpResponse struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
	Data    any    `json:"data"`
}

// Codes of pumpResponse: util.SuccessResponse and util.ErrResponsef.
const (
	pumpCodeOK    = 200
	pumpCodeError = 3
)

// Messages of the errors a registry read fails with: the server context is cancelled once Close began;
// the etcd request times out while PD is unreachable or has no quorum.
const (
	pumpErrCancelled = "context canceled"
	pumpErrTimeout   = "context deadline exceeded"
)

// pumpRoutes returns the handler of Pump's port 8250.
func (s *Server) pumpRoutes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		n := st.c.servingPump(st.t.pod)
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		switch {
		case n == nil:
			// resolve lets only serving pumps through; a nil here is a bug, answered as a refusal.
			w.WriteHeader(http.StatusBadGateway)
		case r.URL.Path == "/status" && r.Method == http.MethodGet:
			writePumpStatus(w, st, n)
		case len(parts) == 3 && parts[0] == "state" && parts[1] != "" && parts[2] != "" && r.Method == http.MethodPut:
			msg, ok := st.c.pumpAction(n, parts[1], parts[2], st.now)
			resp := pumpResponse{Message: msg, Code: pumpCodeOK}
			if !ok {
				resp.Code = pumpCodeError
			}
			writeJSON(w, http.StatusOK, resp)
		case r.URL.Path == "/status" || (len(parts) == 3 && parts[0] == "state" && parts[1] != "" && parts[2] != ""):
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			http.NotFound(w, r)
		}
	})
}

// writePumpStatus answers `GET /status` as the pump serving n: the registry read fails once the pump is
// closing (its context is cancelled) or when PD is not reachable.
func writePumpStatus(w http.ResponseWriter, st *reqState, n *pumpNode) {
	var body pumpHTTPStatus
	switch {
	case n.proc.state != pumpOnline:
		body.ErrMsg = pumpErrCancelled
	case !st.c.pumpCanReachPD():
		body.ErrMsg = pumpErrTimeout
	default:
		body.StatusMap = map[string]*pumpNodeStatus{}
		for _, e := range st.c.sortedPumpNodes() {
			body.StatusMap[e.id] = &pumpNodeStatus{
				NodeID: e.id, Addr: e.host, State: e.state, MaxCommitTS: e.maxCommitTS, UpdateTS: e.updateTS,
			}
		}
		body.CommitTS = tsoAt(st.now)
	}
	data, err := json.Marshal(body)
	if err != nil {
		writeText(w, http.StatusInternalServerError, "simulator: encode response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(data, '\n'))
}
