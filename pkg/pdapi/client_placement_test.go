package pdapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// pdTiFlashRulesJSON is GET /pd/api/v1/config/rules/group/tiflash of a PD v8.5 after
// `ALTER TABLE … SET TIFLASH REPLICA 2` on table 45 and `… REPLICA 1` on table 47 (the rules TiDB writes).
const pdTiFlashRulesJSON = `[
  {
    "group_id": "tiflash",
    "id": "table-45-r",
    "index": 120,
    "start_key": "7480000000000000ff2d5f720000000000fa",
    "end_key": "7480000000000000ff2e00000000000000f8",
    "role": "learner",
    "is_witness": false,
    "count": 2,
    "label_constraints": [
      {
        "key": "engine",
        "op": "in",
        "values": [
          "tiflash"
        ]
      }
    ],
    "version": 1,
    "create_timestamp": 1717000000
  },
  {
    "group_id": "tiflash",
    "id": "table-47-r",
    "index": 120,
    "start_key": "7480000000000000ff2f5f720000000000fa",
    "end_key": "7480000000000000ff3000000000000000f8",
    "role": "learner",
    "is_witness": false,
    "count": 1,
    "label_constraints": [
      {
        "key": "engine",
        "op": "in",
        "values": [
          "tiflash"
        ]
      }
    ],
    "location_labels": ["zone"],
    "create_timestamp": 1717000100
  }
]
`

const (
	rulesPath                = "/pd/api/v1/config/rules/group/tiflash"
	pdPlacementDisabledJSON  = `"[PD:placement:ErrPlacementDisabled]placement rules feature is disabled"` + "\n"
	pdPlacementDisabledOldPD = `"placement rules feature is disabled"` + "\n"
)

func TestGetPlacementRulesDecodesRealPDAnswer(t *testing.T) {
	t.Parallel()
	pd := newStubPD(t, map[string]answer{"GET " + rulesPath: ok(pdTiFlashRulesJSON)})
	rules, err := pd.client().GetPlacementRules(context.Background(), pdapi.PlacementGroupTiFlash)
	check(t, "GetPlacementRules", err)
	want := pdapi.PlacementRule{
		GroupID: "tiflash", ID: "table-45-r", Index: 120, StartKeyHex: "7480000000000000ff2d5f720000000000fa",
		EndKeyHex: "7480000000000000ff2e00000000000000f8", Role: pdapi.PeerRoleLearner, Count: 2,
		LabelConstraints: []pdapi.LabelConstraint{{Key: "engine", Op: pdapi.LabelConstraintIn, Values: []string{"tiflash"}}},
		Version:          1, CreateTimestamp: 1717000000,
	}
	if len(rules) != 2 || rules[1].Count != 1 || rules[1].LocationLabels[0] != "zone" {
		t.Fatalf("rules = %+v", rules)
	}
	if diff := cmp.Diff(want, rules[0]); diff != "" {
		t.Errorf("first rule (-want +got):\n%s", diff)
	}
}

func TestMaxTiFlashReplicas(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answer  *answer // nil: the route is unknown (404 from Go's mux)
		want    int
		wantErr error
	}{
		{name: "largest count", answer: &answer{200, pdTiFlashRulesJSON}, want: 2},
		{name: "no rule (PD renders null)", answer: &answer{200, "null\n"}, want: 0},
		{name: "no rule (empty array)", answer: &answer{200, "[]\n"}, want: 0},
		{name: "placement rules disabled", answer: &answer{http.StatusPreconditionFailed, pdPlacementDisabledJSON}, want: 0},
		{name: "placement rules disabled, PD 4", answer: &answer{http.StatusPreconditionFailed, pdPlacementDisabledOldPD}, want: 0},
		{name: "PD without the API", want: 0},
		{name: "not bootstrapped", answer: &answer{500, pdNotBootstrappedJSON}, wantErr: pdapi.ErrTiKVNotBootstrapped},
		{name: "malformed", answer: &answer{200, `{"count": 2}`}, wantErr: errAny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answers := map[string]answer{}
			if tc.answer != nil {
				answers["GET "+rulesPath] = *tc.answer
			}
			got, err := newStubPD(t, answers).client().MaxTiFlashReplicas(context.Background())
			switch {
			case errors.Is(tc.wantErr, errAny) && err != nil:
			case tc.wantErr != nil:
				assertError(t, err, tc.wantErr, 0, "MaxTiFlashReplicas")
			default:
				check(t, "MaxTiFlashReplicas", err)
			}
			if got != tc.want {
				t.Errorf("MaxTiFlashReplicas = %d, want %d", got, tc.want)
			}
		})
	}
}

// errAny stands for "some error" in a table.
var errAny = errors.New("any error")

func TestGetPlacementRulesDisabled(t *testing.T) {
	t.Parallel()
	pd := newStubPD(t, map[string]answer{"GET " + rulesPath: {http.StatusPreconditionFailed, pdPlacementDisabledJSON}})
	_, err := pd.client().GetPlacementRules(context.Background(), "tiflash")
	assertError(t, err, pdapi.ErrPlacementRulesDisabled, http.StatusPreconditionFailed, "GetPlacementRules", "412")
}

func TestEnablePlacementRules(t *testing.T) {
	t.Parallel()
	post := request{Method: "POST", URI: "/pd/api/v1/config/replicate", Body: `{"enable-placement-rules":"true"}`}
	pd := newStubPD(t, map[string]answer{"POST /pd/api/v1/config/replicate": ok(`"The config is updated."`)})
	check(t, "EnablePlacementRules", pd.client().EnablePlacementRules(context.Background()))
	if diff := cmp.Diff([]request{post}, pd.received()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	refused := newStubPD(t, map[string]answer{"POST /pd/api/v1/config/replicate": {500, pdNotBootstrappedJSON}})
	err := refused.client().EnablePlacementRules(context.Background())
	assertError(t, err, pdapi.ErrTiKVNotBootstrapped, 500, "EnablePlacementRules")
}

func TestIsTiFlash(t *testing.T) {
	t.Parallel()
	tiflash := &pdapi.MetaStore{Labels: []*pdapi.StoreLabel{{Key: "zone", Value: "z1"}, {Key: "engine", Value: "tiflash"}}}
	tikv := &pdapi.MetaStore{Labels: []*pdapi.StoreLabel{{Key: "zone", Value: "z1"}, nil}}
	if !pdapi.IsTiFlash(tiflash) || pdapi.IsTiFlash(tikv) || pdapi.IsTiFlash(nil) {
		t.Error("IsTiFlash must be true only for a store labelled engine=tiflash")
	}
}
