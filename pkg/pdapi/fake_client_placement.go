package pdapi

import (
	"context"
	"net/http"
	"net/url"
	"slices"
)

// SetPlacementRules sets every placement rule PD holds, of any group; GetPlacementRules filters them by
// group and MaxTiFlashReplicas reads those of group "tiflash". They are in force only while the config
// has Replication.EnablePlacementRules (see SetConfig, EnablePlacementRules).
func (f *FakeClient) SetPlacementRules(rules ...PlacementRule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = make([]PlacementRule, 0, len(rules))
	for _, r := range rules {
		f.rules = append(f.rules, copyRule(r))
	}
}

// GetPlacementRules implements Reader: the rules of group in the order set. While placement rules are
// disabled it fails as PD does, with a 412 StatusError that wraps ErrPlacementRulesDisabled.
func (f *FakeClient) GetPlacementRules(_ context.Context, group string) ([]PlacementRule, error) {
	if err := f.begin(MethodGetPlacementRules, group); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.config.Replication.EnablePlacementRules {
		return nil, fakeStatusError(http.MethodGet, placementRulesGroupPath+url.PathEscape(group),
			http.StatusPreconditionFailed, "[PD:placement:ErrPlacementDisabled]placement rules feature is disabled")
	}
	return f.rulesOf(group), nil
}

// MaxTiFlashReplicas implements Reader: the largest count among the rules of group "tiflash", 0 when there
// is none or placement rules are disabled.
func (f *FakeClient) MaxTiFlashReplicas(_ context.Context) (int, error) {
	if err := f.begin(MethodMaxTiFlashReplicas); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.config.Replication.EnablePlacementRules {
		return 0, nil
	}
	return maxTiFlashReplicas(f.rulesOf(PlacementGroupTiFlash)), nil
}

// EnablePlacementRules implements Writer: the config gets EnablePlacementRules, with the checks of
// UpdateReplicationConfig (before bootstrap, turning it on fails with ErrTiKVNotBootstrapped).
func (f *FakeClient) EnablePlacementRules(_ context.Context) error {
	if err := f.begin(MethodEnablePlacementRules); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	enable := true
	return f.applyReplicationUpdate(ReplicationConfigUpdate{EnablePlacementRules: &enable})
}

// rulesOf returns copies of the rules of group; the caller holds f.mu.
func (f *FakeClient) rulesOf(group string) []PlacementRule {
	out := []PlacementRule{}
	for _, r := range f.rules {
		if r.GroupID == group {
			out = append(out, copyRule(r))
		}
	}
	return out
}

func copyRule(r PlacementRule) PlacementRule {
	r.LocationLabels = slices.Clone(r.LocationLabels)
	constraints := r.LabelConstraints
	r.LabelConstraints = nil
	for _, c := range constraints {
		c.Values = slices.Clone(c.Values)
		r.LabelConstraints = append(r.LabelConstraints, c)
	}
	return r
}
