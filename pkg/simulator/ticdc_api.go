package simulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// TiCDC's HTTP API on port 8301 (tiflow cdc/api: the status API and the v1 open API). The v1 routes are
// served only once the pod's capture is registered; before that TiCDC answers 503 ErrServerIsNotReady.
// Requests TiCDC forwards to the owner (captures, drain, resign, health) are answered as the owner would,
// whichever capture receives them.

// cdcRootStatus is the body of `GET /status` (tiflow cdc/api/status).
type cdcRootStatus struct {
	Version string `json:"version"`
	GitHash string `json:"git_hash"`
	ID      string `json:"id"`
	Pid     int    `json:"pid"`
	IsOwner bool   `json:"is_owner"`
}

// cdcServerStatus is the body of `GET /api/v1/status` (tiflow model.ServerStatus); liveness 0 is Alive.
type cdcServerStatus struct {
	Version   string `json:"version"`
	GitHash   string `json:"git_hash"`
	ID        string `json:"id"`
	ClusterID string `json:"cluster_id"`
	Pid       int    `json:"pid"`
	IsOwner   bool   `json:"is_owner"`
	Liveness  int32  `json:"liveness"`
}

// cdcCapture is one element of `GET /api/v1/captures` (tiflow model.Capture).
type cdcCapture struct {
	ID            string `json:"id"`
	IsOwner       bool   `json:"is_owner"`
	AdvertiseAddr string `json:"address"`
	ClusterID     string `json:"cluster_id"`
}

// cdcDrainRequest and cdcDrainResponse are the bodies of `PUT /api/v1/captures/drain`.
type cdcDrainRequest struct {
	CaptureID string `json:"capture_id"`
}

type cdcDrainResponse struct {
	CurrentTableCount int `json:"current_table_count"`
}

// cdcHTTPError is TiCDC's error body (tiflow model.HTTPError).
type cdcHTTPError struct {
	Error string `json:"error_msg"`
	Code  string `json:"error_code"`
}

// cdcPid is the capture's process ID: the operator's start script execs cdc, so it is PID 1.
const cdcPid = 1

// ticdcRoutes registers TiCDC's port 8301 endpoints.
func (s *Server) ticdcRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { handleCDCRootStatus(w, stateOf(r)) })
	v1 := func(pattern string, h func(w http.ResponseWriter, r *http.Request, st *reqState, cp *capture)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			st := stateOf(r)
			cp := st.c.captures[st.t.pod]
			if cp == nil {
				writeCDCError(w, &cdcError{http.StatusServiceUnavailable, "CDC:ErrServerIsNotReady", "cdc server is not ready"})
				return
			}
			h(w, r, st, cp)
		})
	}
	v1("GET /api/v1/status", handleCDCServerStatus)
	v1("GET /api/v1/health", handleCDCHealth)
	v1("GET /api/v1/captures", handleCDCCaptures)
	v1("PUT /api/v1/captures/drain", handleCDCDrain)
	v1("POST /api/v1/owner/resign", func(w http.ResponseWriter, _ *http.Request, st *reqState, _ *capture) {
		st.c.resignCDCOwner()
		w.WriteHeader(http.StatusAccepted)
	})
	return mux
}

// writeGinJSON renders v as gin's c.JSON (compact) or, with indent, c.IndentedJSON (four spaces), which
// TiCDC's and TiProxy's handlers use; neither ends with a newline.
func writeGinJSON(w http.ResponseWriter, status int, v any, indent bool) {
	var data []byte
	var err error
	if indent {
		data, err = json.MarshalIndent(v, "", "    ")
	} else {
		data, err = json.Marshal(v)
	}
	if err != nil {
		writeText(w, http.StatusInternalServerError, fmt.Sprintf("simulator: encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// writeCDCError renders e as TiCDC's error middleware does: `[code]message` and the code, indented.
func writeCDCError(w http.ResponseWriter, e *cdcError) {
	writeGinJSON(w, e.status, cdcHTTPError{Error: "[" + e.code + "]" + e.msg, Code: e.code}, true)
}

// handleCDCRootStatus answers `GET /status` as TiCDC's status API: one-space indented JSON, or 500 with
// the bare error text before the capture is initialized.
func handleCDCRootStatus(w http.ResponseWriter, st *reqState) {
	cp := st.c.captures[st.t.pod]
	if cp == nil {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "[CDC:ErrCaptureNotInitialized]capture has not been initialized yet")
		return
	}
	data, _ := json.MarshalIndent(cdcRootStatus{
		Version: cp.version, GitHash: simGitHash, ID: cp.id, Pid: cdcPid, IsOwner: cp.pod == st.c.cdcOwner,
	}, "", " ")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

func handleCDCServerStatus(w http.ResponseWriter, _ *http.Request, st *reqState, cp *capture) {
	writeGinJSON(w, http.StatusOK, cdcServerStatus{
		Version: cp.version, GitHash: simGitHash, ID: cp.id, ClusterID: ticdcClusterID, Pid: cdcPid,
		IsOwner: cp.pod == st.c.cdcOwner,
	}, true)
}

// handleCDCHealth answers the owner's view of the cluster: 200 with no body, or 500 ErrClusterIsUnhealthy
// while a capture is not initialized (marked unhealthy).
func handleCDCHealth(w http.ResponseWriter, _ *http.Request, st *reqState, _ *capture) {
	if st.c.cdcStalled() {
		writeCDCError(w, &cdcError{http.StatusInternalServerError, "CDC:ErrClusterIsUnhealthy", "TiCDC cluster is unhealthy"})
		return
	}
	w.WriteHeader(http.StatusOK)
}

func handleCDCCaptures(w http.ResponseWriter, _ *http.Request, st *reqState, _ *capture) {
	out := []cdcCapture{}
	for _, cp := range st.c.sortedCaptures() {
		out = append(out, cdcCapture{
			ID: cp.id, IsOwner: cp.pod == st.c.cdcOwner, AdvertiseAddr: st.c.captureAddress(cp), ClusterID: ticdcClusterID,
		})
	}
	writeGinJSON(w, http.StatusOK, out, true)
}

// handleCDCDrain answers 202 {"current_table_count": n}; a body that is not the request JSON is a 400
// ErrAPIInvalidParam, the refusals of drainCapture keep TiCDC's statuses.
func handleCDCDrain(w http.ResponseWriter, r *http.Request, st *reqState, _ *capture) {
	var req cdcDrainRequest
	if err := readJSON(r, &req); err != nil {
		writeCDCError(w, &cdcError{http.StatusBadRequest, "CDC:ErrAPIInvalidParam", err.Error()})
		return
	}
	n, cerr := st.c.drainCapture(req.CaptureID)
	if cerr != nil {
		writeCDCError(w, cerr)
		return
	}
	writeGinJSON(w, http.StatusAccepted, cdcDrainResponse{CurrentTableCount: n}, false)
}
