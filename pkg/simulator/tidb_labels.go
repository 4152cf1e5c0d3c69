package simulator

import (
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// pdLocationLabels reads replication.location-labels from a TidbCluster's spec.pd.config, which is
// either a map or a TOML string; nil when it names none or does not parse (PD would not start).
func pdLocationLabels(u *unstructured.Unstructured) []string {
	cfg, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "pd", "config")
	if !found {
		return nil
	}
	tree, ok := cfg.(map[string]any)
	if text, isText := cfg.(string); isText {
		tree = map[string]any{}
		ok = toml.Unmarshal([]byte(text), &tree) == nil
	}
	if !ok {
		return nil
	}
	repl, _ := tree["replication"].(map[string]any)
	var out []string
	switch v := repl["location-labels"].(type) {
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	case string: // PD also takes "zone,host"
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// adoptLocationLabels gives PD the location-labels of its config file, as a PD bootstrapped from that
// config has them, unless PD already holds some (set by its config or its API).
func (c *Cluster) adoptLocationLabels(labels []string) {
	if len(labels) == 0 || len(c.replication.LocationLabels) > 0 {
		return
	}
	c.replication.LocationLabels = append(c.replication.LocationLabels[:0:0], labels...)
	c.log.Info("location-labels from the TidbCluster's PD config", "labels", labels)
}
