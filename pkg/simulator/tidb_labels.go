package simulator

import (
	"maps"
	"net/http"
	"strconv"
)

// tidbServerLabels are the server labels one run of a TiDB process holds: TiDB keeps labels set through
// `POST /labels` in memory, so a restarted process (new pod UID or restart count) starts without them.
type tidbServerLabels struct {
	run    string
	labels map[string]string
}

func tidbRun(p PodObservation) string { return p.UID + "/" + strconv.Itoa(int(p.Restarts)) }

// tidbLabelsOf returns the labels the running TiDB process of p holds (never nil).
func (c *Cluster) tidbLabelsOf(p PodObservation) map[string]string {
	if l, ok := c.tidbLabels[p.Name]; ok && l.run == tidbRun(p) {
		return maps.Clone(l.labels)
	}
	return map[string]string{}
}

// handleTiDBSetLabels is TiDB's `POST /labels`: a JSON object of strings merged into the server's labels,
// which `/info` then reports; anything else is 400, as TiDB answers.
func handleTiDBSetLabels(w http.ResponseWriter, r *http.Request, st *reqState) {
	var labels map[string]string
	if err := readJSON(r, &labels); err != nil {
		writeText(w, http.StatusBadRequest, err.Error())
		return
	}
	p := st.c.pods[st.t.pod]
	merged := st.c.tidbLabelsOf(p)
	maps.Copy(merged, labels)
	if st.c.tidbLabels == nil {
		st.c.tidbLabels = map[string]*tidbServerLabels{}
	}
	st.c.tidbLabels[p.Name] = &tidbServerLabels{run: tidbRun(p), labels: merged}
	if st.c.tidbLabelWrites == nil {
		st.c.tidbLabelWrites = map[string]int{}
	}
	st.c.tidbLabelWrites[p.Name]++
	st.c.log.Info("TiDB server labels set", "pod", p.Name, "labels", labels)
	writeJSON(w, http.StatusOK, "The TiDB server labels are updated.")
}
