package pdapi_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func ptr[T any](v T) *T { return &v }

func TestWrites(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answers map[string]answer
		write   func(context.Context, pdapi.Client) error
		// want is the requests PD must receive, in order.
		want     []request
		wantErr  bool
		contains []string
	}{{
		name:    "transfer leader",
		answers: map[string]answer{"POST /pd/api/v1/leader/transfer/basic-pd-1": ok(`"The transfer command is submitted."`)},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.TransferPDLeader(ctx, "basic-pd-1") },
		want:    []request{{Method: "POST", URI: "/pd/api/v1/leader/transfer/basic-pd-1"}},
	}, {
		name:  "transfer leader 404 is success",
		write: func(ctx context.Context, c pdapi.Client) error { return c.TransferPDLeader(ctx, "basic-pd-1") },
		want:  []request{{Method: "POST", URI: "/pd/api/v1/leader/transfer/basic-pd-1"}},
	}, {
		name:    "transfer leader 500 fails with PD's text",
		answers: map[string]answer{"POST /pd/api/v1/leader/transfer/basic-pd-1": {500, `"[PD:etcd:ErrEtcdMoveLeader]etcd move leader error"`}},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.TransferPDLeader(ctx, "basic-pd-1") },
		want:    []request{{Method: "POST", URI: "/pd/api/v1/leader/transfer/basic-pd-1"}},
		wantErr: true, contains: []string{"TransferPDLeader", "POST", "500", "etcd move leader error"},
	}, {
		name:    "delete member by name",
		answers: map[string]answer{"DELETE /pd/api/v1/members/name/basic-pd-2": ok(`"removed, pd: basic-pd-2"`)},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.DeleteMember(ctx, "basic-pd-2") },
		want:    []request{{Method: "DELETE", URI: "/pd/api/v1/members/name/basic-pd-2"}},
	}, {
		name:    "delete absent member by name",
		answers: map[string]answer{"DELETE /pd/api/v1/members/name/basic-pd-2": {404, `"not found, pd: basic-pd-2"`}},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.DeleteMember(ctx, "basic-pd-2") },
		want:    []request{{Method: "DELETE", URI: "/pd/api/v1/members/name/basic-pd-2"}},
	}, {
		name: "delete member by ID",
		answers: map[string]answer{
			"GET /pd/api/v1/members":                            ok(pdMembersJSON),
			"DELETE /pd/api/v1/members/id/10103474784898404870": ok(`"removed, pd: 10103474784898404870"`),
		},
		write: func(ctx context.Context, c pdapi.Client) error { return c.DeleteMemberByID(ctx, 10103474784898404870) },
		want: []request{
			{Method: "GET", URI: "/pd/api/v1/members"},
			{Method: "DELETE", URI: "/pd/api/v1/members/id/10103474784898404870"},
		},
	}, {
		name: "delete absent member by ID sends no DELETE",
		answers: map[string]answer{
			"GET /pd/api/v1/members":         ok(pdMembersJSON),
			"DELETE /pd/api/v1/members/id/5": {500, pdEtcdMemberNotFoundJSON},
		},
		write: func(ctx context.Context, c pdapi.Client) error { return c.DeleteMemberByID(ctx, 5) },
		want:  []request{{Method: "GET", URI: "/pd/api/v1/members"}},
	}, {
		name:    "delete store",
		answers: map[string]answer{"DELETE /pd/api/v1/store/4": ok(`"The store is set as Offline."`)},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.DeleteStore(ctx, 4) },
		want:    []request{{Method: "DELETE", URI: "/pd/api/v1/store/4"}},
	}, {
		name:    "delete unknown store",
		answers: map[string]answer{"DELETE /pd/api/v1/store/42": {404, pdStoreNotFoundJSON}},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.DeleteStore(ctx, 42) },
		want:    []request{{Method: "DELETE", URI: "/pd/api/v1/store/42"}},
	}, {
		name:    "delete tombstone store",
		answers: map[string]answer{"DELETE /pd/api/v1/store/7": {410, `"[PD:core:ErrStoreRemoved]store 7 has been removed"`}},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.DeleteStore(ctx, 7) },
		want:    []request{{Method: "DELETE", URI: "/pd/api/v1/store/7"}},
	}, {
		name: "delete store refused",
		answers: map[string]answer{"DELETE /pd/api/v1/store/4": {400,
			`"[PD:core:ErrStoresNotEnough]can not remove store 4 since the number of up stores would be 2 while need 3"`}},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.DeleteStore(ctx, 4) },
		want:    []request{{Method: "DELETE", URI: "/pd/api/v1/store/4"}},
		wantErr: true, contains: []string{"DeleteStore", "/pd/api/v1/store/4", "400", "ErrStoresNotEnough"},
	}, {
		name:    "set store state",
		answers: map[string]answer{"POST /pd/api/v1/store/4/state?state=Up": ok(`"The store's state is updated."`)},
		write:   func(ctx context.Context, c pdapi.Client) error { return c.SetStoreState(ctx, 4, "Up") },
		want:    []request{{Method: "POST", URI: "/pd/api/v1/store/4/state?state=Up"}},
	}, {
		name:    "set store labels",
		answers: map[string]answer{"POST /pd/api/v1/store/1/label": ok(`"The store's label is updated."`)},
		write: func(ctx context.Context, c pdapi.Client) error {
			return c.SetStoreLabels(ctx, 1, map[string]string{"zone": "z1", "host": "node-1"})
		},
		want: []request{{Method: "POST", URI: "/pd/api/v1/store/1/label", Body: `{"host":"node-1","zone":"z1"}`}},
	}, {
		name:    "set store labels rejected",
		answers: map[string]answer{"POST /pd/api/v1/store/1/label": {400, pdInvalidInputJSON}},
		write: func(ctx context.Context, c pdapi.Client) error {
			return c.SetStoreLabels(ctx, 1, map[string]string{"engine": "x"})
		},
		want:    []request{{Method: "POST", URI: "/pd/api/v1/store/1/label", Body: `{"engine":"x"}`}},
		wantErr: true, contains: []string{"SetStoreLabels", "400", "input: json"},
	}, {
		name:    "enable placement rules",
		answers: map[string]answer{"POST /pd/api/v1/config/replicate": ok(`"The config is updated."`)},
		write: func(ctx context.Context, c pdapi.Client) error {
			return c.UpdateReplicationConfig(ctx, pdapi.ReplicationConfigUpdate{
				EnablePlacementRules: ptr(true), MaxReplicas: ptr(uint64(5)),
				LocationLabels: ptr(pdapi.StringSlice{"zone", "host"}),
			})
		},
		want: []request{{Method: "POST", URI: "/pd/api/v1/config/replicate",
			Body: `{"max-replicas":5,"location-labels":"zone,host","enable-placement-rules":"true"}`}},
	}, {
		name: "empty replication update sends nothing",
		write: func(ctx context.Context, c pdapi.Client) error {
			return c.UpdateReplicationConfig(ctx, pdapi.ReplicationConfigUpdate{})
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pd := newStubPD(t, tc.answers)
			err := tc.write(context.Background(), pd.client())
			if tc.wantErr {
				assertError(t, err, nil, 0, tc.contains...)
			} else {
				check(t, tc.name, err)
			}
			if diff := cmp.Diff(tc.want, pd.received()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBeginEvictLeader(t *testing.T) {
	t.Parallel()
	post := request{Method: "POST", URI: "/pd/api/v1/schedulers", Body: `{"name":"evict-leader-scheduler","store_id":4}`}
	list := request{Method: "GET", URI: "/pd/api/v1/schedulers"}
	cases := []struct {
		name     string
		answers  map[string]answer
		want     []request
		contains []string
	}{{
		name:    "created",
		answers: map[string]answer{"POST /pd/api/v1/schedulers": ok(`"The scheduler is created."`)},
		want:    []request{post},
	}, {
		name: "already existed",
		answers: map[string]answer{
			"POST /pd/api/v1/schedulers": {500, pdSchedulerExistedJSON},
			"GET /pd/api/v1/schedulers":  ok(pdSchedulersJSON),
		},
		want: []request{post, list},
	}, {
		name: "refused and not listed",
		answers: map[string]answer{
			"POST /pd/api/v1/schedulers": {500, `"[PD:core:ErrStoreNotFound]store 4 not found"`},
			"GET /pd/api/v1/schedulers":  ok(`["balance-leader-scheduler"]`),
		},
		want:     []request{post, list},
		contains: []string{"BeginEvictLeader", "500", "store 4 not found"},
	}, {
		name: "refused and listing fails",
		answers: map[string]answer{
			"POST /pd/api/v1/schedulers": {500, pdSchedulerExistedJSON},
			"GET /pd/api/v1/schedulers":  {503, `"[PD:server:ErrLeaderNil]leader is nil"`},
		},
		want:     []request{post, list},
		contains: []string{"scheduler existed", "then listing schedulers", "leader is nil"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pd := newStubPD(t, tc.answers)
			err := pd.client().BeginEvictLeader(context.Background(), 4)
			if tc.contains != nil {
				assertError(t, err, nil, 500, tc.contains...)
			} else {
				check(t, "BeginEvictLeader", err)
			}
			if diff := cmp.Diff(tc.want, pd.received()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEndEvictLeader(t *testing.T) {
	t.Parallel()
	del := request{Method: "DELETE", URI: "/pd/api/v1/schedulers/evict-leader-scheduler-1"}
	list := request{Method: "GET", URI: "/pd/api/v1/schedulers"}
	stillListed := ok(pdSchedulersJSON) // lists stores 1 and 4
	gone := ok(`["balance-leader-scheduler", "evict-leader-scheduler-4"]`)
	cases := []struct {
		name     string
		answers  map[string]answer
		want     []request
		contains []string
	}{{
		name:    "absent (404)",
		answers: map[string]answer{"DELETE /pd/api/v1/schedulers/evict-leader-scheduler-1": {404, pdSchedulerNotFoundJSON}},
		want:    []request{del},
	}, {
		name: "removed",
		answers: map[string]answer{
			"DELETE /pd/api/v1/schedulers/evict-leader-scheduler-1": ok(`"The scheduler is removed."`),
			"GET /pd/api/v1/schedulers":                             gone,
		},
		want: []request{del, list},
	}, {
		name: "error but gone",
		answers: map[string]answer{
			"DELETE /pd/api/v1/schedulers/evict-leader-scheduler-1": {500, pdSchedulerNotFoundJSON},
			"GET /pd/api/v1/schedulers":                             gone,
		},
		want: []request{del, list},
	}, {
		name: "200 but still listed",
		answers: map[string]answer{
			"DELETE /pd/api/v1/schedulers/evict-leader-scheduler-1": ok(`"The scheduler is removed."`),
			"GET /pd/api/v1/schedulers":                             stillListed,
		},
		want:     []request{del, list},
		contains: []string{"EndEvictLeader", "store 1 is still listed"},
	}, {
		name: "error and still listed",
		answers: map[string]answer{
			"DELETE /pd/api/v1/schedulers/evict-leader-scheduler-1": {500, `"[PD:server:ErrServerNotStarted]server not started"`},
			"GET /pd/api/v1/schedulers":                             stillListed,
		},
		want:     []request{del, list},
		contains: []string{"store 1 is still listed", "500", "server not started"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pd := newStubPD(t, tc.answers)
			err := pd.client().EndEvictLeader(context.Background(), 1)
			if tc.contains != nil {
				assertError(t, err, nil, 0, tc.contains...)
			} else {
				check(t, "EndEvictLeader", err)
			}
			if diff := cmp.Diff(tc.want, pd.received()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
