package pdapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// placementRulesGroupPath is PD's placement rules API of one group (`…/{group}`).
const placementRulesGroupPath = "/pd/api/v1/config/rules/group/"

// GetPlacementRules implements Reader.
func (c *pdClient) GetPlacementRules(ctx context.Context, group string) ([]PlacementRule, error) {
	rules, err := c.placementRules(ctx, group)
	return rules, wrap("GetPlacementRules", err)
}

// placementRules reads the rules of group; PD renders an empty group as `null`, returned as an empty
// slice.
func (c *pdClient) placementRules(ctx context.Context, group string) ([]PlacementRule, error) {
	var rules []PlacementRule
	if err := c.getJSON(ctx, placementRulesGroupPath+url.PathEscape(group), &rules); err != nil {
		return nil, err
	}
	if rules == nil {
		rules = []PlacementRule{}
	}
	return rules, nil
}

// MaxTiFlashReplicas implements Reader.
func (c *pdClient) MaxTiFlashReplicas(ctx context.Context) (int, error) {
	rules, err := c.placementRules(ctx, PlacementGroupTiFlash)
	if noPlacementRules(err) {
		return 0, nil
	}
	if err != nil {
		return 0, wrap("MaxTiFlashReplicas", err)
	}
	return maxTiFlashReplicas(rules), nil
}

// noPlacementRules reports whether err means PD holds no rule in force: the rules API is missing (404,
// PD < 4) or placement rules are disabled (412), in which case PD schedules no TiFlash replica at all.
func noPlacementRules(err error) bool {
	return errors.Is(err, ErrPlacementRulesDisabled) || IsStatus(err, http.StatusNotFound)
}

// maxTiFlashReplicas is the largest count among the rules of group "tiflash" (0 when none).
func maxTiFlashReplicas(rules []PlacementRule) int {
	most := 0
	for _, r := range rules {
		if r.GroupID == PlacementGroupTiFlash && r.Count > most {
			most = r.Count
		}
	}
	return most
}

// EnablePlacementRules implements Writer.
func (c *pdClient) EnablePlacementRules(ctx context.Context) error {
	enable := true
	err := c.write(ctx, http.MethodPost, replicateConfigPath, ReplicationConfigUpdate{EnablePlacementRules: &enable})
	return wrap("EnablePlacementRules", err)
}

// IsTiFlash reports whether store is a TiFlash store: it carries the label engine=tiflash. A nil store is
// not.
func IsTiFlash(store *MetaStore) bool {
	if store == nil {
		return false
	}
	for _, l := range store.Labels {
		if l != nil && l.Key == StoreLabelEngine && l.Value == EngineTiFlash {
			return true
		}
	}
	return false
}
