package simulator

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// msgPageNotFound is the text/plain body of PD's router 404, e.g. for a scheduler config that does not
// exist.
const msgPageNotFound = "404 page not found\n"

// pdClusterRoutes registers the read endpoints of PD's Raft cluster beyond what the operator uses (spec
// §5), so that a client sees a bootstrapped or not bootstrapped PD answer as a real one.
func pdClusterRoutes(route func(string, pdNeed, pdHandler)) {
	route("GET /pd/api/v1/regions", needBootstrap, handleRegions)
	route("GET /pd/api/v1/region/id/{id}", needBootstrap, handleRegionByID)
	route("GET /pd/api/v1/operators", needBootstrap, handleOperators)
	route("GET /pd/api/v1/min-resolved-ts", needBootstrap, handleMinResolvedTS)
	route("GET /pd/api/v1/config/rules", needBootstrap, handlePlacementRules)
	route("GET /pd/api/v1/config/cluster-version", needLeader, handleClusterVersion)
}

// handleRegions is `GET /pd/api/v1/regions`. The simulator counts regions but does not model them one by
// one, so the list is empty, as a real PD's right after bootstrap.
func handleRegions(w http.ResponseWriter, _ *http.Request, _ *reqState) {
	writeJSON(w, http.StatusOK, map[string]any{"count": 0, "regions": []any{}})
}

// zeroRegion is what PD renders for a region it does not know: 200 with a zero region, not 404.
type zeroRegion struct {
	ID       uint64 `json:"id"`
	StartKey string `json:"start_key"`
	EndKey   string `json:"end_key"`
	Leader   struct {
		RoleName string `json:"role_name"`
	} `json:"leader"`
	CPUUsage        int `json:"cpu_usage"`
	WrittenBytes    int `json:"written_bytes"`
	ReadBytes       int `json:"read_bytes"`
	WrittenKeys     int `json:"written_keys"`
	ReadKeys        int `json:"read_keys"`
	ApproximateSize int `json:"approximate_size"`
	ApproximateKeys int `json:"approximate_keys"`
}

// handleRegionByID is `GET /pd/api/v1/region/id/{id}`: every ID is unknown to the simulator.
func handleRegionByID(w http.ResponseWriter, r *http.Request, _ *reqState) {
	if _, ok := storeIDParam(w, r); !ok {
		return
	}
	writeJSON(w, http.StatusOK, zeroRegion{})
}

// handleOperators is `GET /pd/api/v1/operators`: the simulator runs no operators.
func handleOperators(w http.ResponseWriter, _ *http.Request, _ *reqState) {
	writeJSON(w, http.StatusOK, []any{})
}

// minResolvedTS is the body of `GET /pd/api/v1/min-resolved-ts`.
type minResolvedTS struct {
	IsRealTime      bool   `json:"is_real_time"`
	MinResolvedTS   int64  `json:"min_resolved_ts"`
	PersistInterval string `json:"persist_interval"`
}

func handleMinResolvedTS(w http.ResponseWriter, _ *http.Request, st *reqState) {
	writeJSON(w, http.StatusOK, minResolvedTS{IsRealTime: true, MinResolvedTS: tsoAt(st.now), PersistInterval: "1s"})
}

// handlePlacementRules is `GET /pd/api/v1/config/rules`: every rule, 412 while placement rules are off.
func handlePlacementRules(w http.ResponseWriter, _ *http.Request, st *reqState) {
	if !st.c.replication.EnablePlacementRules {
		writeJSON(w, http.StatusPreconditionFailed, msgPlacementDisabled)
		return
	}
	rules := st.c.rulesOf("pd")
	rules = append(rules, st.c.rulesOf("tiflash")...)
	writeJSON(w, http.StatusOK, rules)
}

// handleClusterVersion is `GET /pd/api/v1/config/cluster-version`: "0.0.0" until a store registered, then
// the lowest version of the stores that are not Tombstone (without the "v"), as PD derives it.
func handleClusterVersion(w http.ResponseWriter, _ *http.Request, st *reqState) {
	writeJSON(w, http.StatusOK, st.c.clusterVersion())
}

func (c *Cluster) clusterVersion() string {
	var versions []string
	for _, s := range c.stores {
		if s.state != pdapi.StoreStateTombstone && s.comp == ComponentTiKV {
			versions = append(versions, trimV(s.version))
		}
	}
	if !c.bootstrapped || len(versions) == 0 {
		return "0.0.0"
	}
	sort.Slice(versions, func(i, j int) bool { return semverLess(versions[i], versions[j]) })
	return versions[0]
}

// semverLess compares dotted numeric versions, ignoring any pre-release suffix.
func semverLess(a, b string) bool {
	pa, pb := strings.SplitN(a, ".", 3), strings.SplitN(b, ".", 3)
	for i := 0; i < 3; i++ {
		x, y := versionPart(pa, i), versionPart(pb, i)
		if x != y {
			return x < y
		}
	}
	return false
}

func versionPart(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	n := 0
	for _, r := range parts[i] {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// errcodeInternal is the body of PD's errcode.NewInternalErr answers (500): code "internal", the message,
// empty data and the stack of program counters, which the simulator leaves empty.
type errcodeInternal struct {
	Code  string          `json:"code"`
	Msg   string          `json:"msg"`
	Data  json.RawMessage `json:"data"`
	Stack []uint64        `json:"stack"`
}

// writeDecodeError answers a body PD could not decode: 400 errcode "input" for malformed JSON, 500
// errcode "internal" for a well-formed body of the wrong types (e.g. an unquoted boolean where PD's field
// carries `,string`).
func writeDecodeError(w http.ResponseWriter, err error) {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Unwrap(err) == nil {
		writeInvalidInput(w, err)
		return
	}
	w.Header().Set("TiDB-Error-Code", "internal")
	writeJSON(w, http.StatusInternalServerError, errcodeInternal{
		Code: "internal", Msg: errors.Unwrap(err).Error(), Data: json.RawMessage(`{}`), Stack: []uint64{},
	})
}
