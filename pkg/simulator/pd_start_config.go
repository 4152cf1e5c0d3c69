package simulator

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pdReplicationSection returns the `replication` table of a TidbCluster's spec.pd.config, which is either
// a map or a TOML string; nil when there is none or it does not parse (PD would not start).
func pdReplicationSection(u *unstructured.Unstructured) map[string]any {
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
	return repl
}

// pdLocationLabels reads replication.location-labels from a TidbCluster's spec.pd.config; nil when it
// names none or does not parse.
func pdLocationLabels(u *unstructured.Unstructured) []string {
	var out []string
	switch v := pdReplicationSection(u)["location-labels"].(type) {
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

// pdMaxReplicas reads replication.max-replicas from a TidbCluster's spec.pd.config; 0 when unset or not a
// positive integer.
func pdMaxReplicas(u *unstructured.Unstructured) uint64 {
	switch v := pdReplicationSection(u)["max-replicas"].(type) {
	case int64:
		return uint64(max(v, 0))
	case float64:
		if v > 0 && v == float64(uint64(v)) {
			return uint64(v)
		}
	case string:
		n, _ := strconv.ParseUint(v, 10, 64)
		return n
	}
	return 0
}

// pdPlacementRules reads replication.enable-placement-rules from a TidbCluster's spec.pd.config (a boolean,
// or a string as PD renders it); nil when unset or not a boolean.
func pdPlacementRules(u *unstructured.Unstructured) *bool {
	switch v := pdReplicationSection(u)["enable-placement-rules"].(type) {
	case bool:
		return &v
	case string:
		if b, err := strconv.ParseBool(v); err == nil {
			return &b
		}
	}
	return nil
}

// adoptStartConfig gives PD the replication settings of its config file (spec.pd.config) as a PD started
// from that file has them: while PD holds no value of its own, i.e. until the first member has joined
// with the file seen, or the config was written through PD's API (or the admin API). Location labels are
// also adopted later while PD holds none.
func (c *Cluster) adoptStartConfig(tc *TidbClusterInfo) {
	labels := tc.PDLocationLabels
	if len(labels) > 0 && (!c.replicationPersisted || len(c.replication.LocationLabels) == 0) &&
		!slices.Equal(labels, c.replication.LocationLabels) {
		c.replication.LocationLabels = append(c.replication.LocationLabels[:0:0], tc.PDLocationLabels...)
		c.log.Info("location-labels from the TidbCluster's PD config", "labels", tc.PDLocationLabels)
	}
	if c.replicationPersisted {
		return
	}
	if tc.PDMaxReplicas > 0 && tc.PDMaxReplicas != c.replication.MaxReplicas {
		c.replication.MaxReplicas = tc.PDMaxReplicas
		c.log.Info("max-replicas from the TidbCluster's PD config", "maxReplicas", tc.PDMaxReplicas)
	}
	if tc.PDPlacementRules != nil && *tc.PDPlacementRules != c.replication.EnablePlacementRules {
		c.replication.EnablePlacementRules = *tc.PDPlacementRules
		c.log.Info("enable-placement-rules from the TidbCluster's PD config", "enabled", *tc.PDPlacementRules)
	}
	c.replicationPersisted = len(c.members) > 0
}
