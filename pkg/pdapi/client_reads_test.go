package pdapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func TestReadsDecodeRealPDAnswers(t *testing.T) {
	t.Parallel()
	pd := newStubPD(t, map[string]answer{
		"GET /pd/api/v1/health":  ok(pdHealthJSON),
		"GET /pd/api/v1/cluster": ok(pdClusterJSON),
		"GET /pd/api/v1/members": ok(pdMembersJSON),
		"GET /pd/api/v1/leader":  ok(pdLeaderJSON),
	})
	c, ctx := pd.client(), context.Background()

	health, err := c.GetHealth(ctx)
	check(t, "GetHealth", err)
	wantHealth := pdapi.HealthInfo{
		{Name: "basic-pd-0", MemberID: 3474484975246189105, ClientUrls: []string{"http://basic-pd-0.basic-pd-peer.default.svc:2379"}, Health: true},
		{Name: "basic-pd-1", MemberID: 10103474784898404870, ClientUrls: []string{"http://basic-pd-1.basic-pd-peer.default.svc:2379"}},
	}
	if diff := cmp.Diff(wantHealth, health); diff != "" {
		t.Errorf("GetHealth (-want +got):\n%s", diff)
	}

	cluster, err := c.GetCluster(ctx)
	check(t, "GetCluster", err)
	if cluster.ID != 7370423847623659243 {
		t.Errorf("GetCluster ID = %d", cluster.ID)
	}

	members, err := c.GetMembers(ctx)
	check(t, "GetMembers", err)
	if len(members.Members) != 2 || members.Members[1].Name != "basic-pd-1" || members.Leader.Name != "basic-pd-0" {
		t.Errorf("GetMembers = %+v", members)
	}

	leader, err := c.GetLeader(ctx)
	check(t, "GetLeader", err)
	if leader.Name != "basic-pd-0" || leader.MemberID != 3474484975246189105 || leader.BinaryVersion != "v8.5.0" {
		t.Errorf("GetLeader = %+v", leader)
	}
}

func TestStoreReadsDecodeRealPDAnswers(t *testing.T) {
	t.Parallel()
	pd := newStubPD(t, map[string]answer{
		"GET /pd/api/v1/stores":         ok(pdStoresJSON),
		"GET /pd/api/v1/stores?state=2": ok(pdTombstoneStoresJSON),
		"GET /pd/api/v1/store/4":        ok(pdStoreJSON),
		"GET /pd/api/v1/config":         ok(pdConfigJSON),
	})
	c, ctx := pd.client(), context.Background()

	stores, err := c.GetStores(ctx)
	check(t, "GetStores", err)
	got := storeSummaries(stores)
	want := []string{"1 Up leaders=34 zone=z1", "4 Offline leaders=0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetStores (-want +got):\n%s", diff)
	}
	if hb := stores.Stores[0].Status.LastHeartbeatTS; hb == nil || !hb.Equal(time.Date(2024, 5, 29, 16, 28, 20, 123456789, time.UTC)) {
		t.Errorf("last_heartbeat_ts = %v", hb)
	}

	tombstones, err := c.GetTombstoneStores(ctx)
	check(t, "GetTombstoneStores", err)
	if diff := cmp.Diff([]string{"7 Tombstone leaders=0"}, storeSummaries(tombstones)); diff != "" {
		t.Errorf("GetTombstoneStores (-want +got):\n%s", diff)
	}

	store, err := c.GetStore(ctx, 4)
	check(t, "GetStore", err)
	if store.Store.StateName != pdapi.StoreStateNameOffline || store.Status.RegionCount != 12 {
		t.Errorf("GetStore = %+v %+v", store.Store, store.Status)
	}

	cfg, err := c.GetConfig(ctx)
	check(t, "GetConfig", err)
	r := cfg.Replication
	if r.MaxReplicas != 3 || !r.EnablePlacementRules || !cmp.Equal([]string(r.LocationLabels), []string{"zone", "host"}) {
		t.Errorf("GetConfig replication = %+v", r)
	}
	if cfg.Schedule.MaxStoreDownTime.Duration != 30*time.Minute {
		t.Errorf("max-store-down-time = %v", cfg.Schedule.MaxStoreDownTime)
	}
}

func storeSummaries(stores *pdapi.StoresInfo) []string {
	var out []string
	for _, s := range stores.Stores {
		line := strings.Join([]string{
			itoa(s.Store.ID), s.Store.StateName, "leaders=" + itoa(uint64(s.Status.LeaderCount)),
		}, " ")
		for _, l := range s.Store.Labels {
			line += " " + l.Key + "=" + l.Value
		}
		out = append(out, line)
	}
	return out
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		answer   answer
		read     func(pdapi.Client) error
		is       error
		status   int
		contains []string
	}{{
		name: "stores before bootstrap (JSON string)", answer: answer{500, pdNotBootstrappedJSON},
		read: getStores, is: pdapi.ErrTiKVNotBootstrapped, status: 500,
		contains: []string{"GetStores", "GET", "/pd/api/v1/stores", "500", "please start TiKV first"},
	}, {
		name: "stores before bootstrap (plain text)", answer: answer{500, "TiKV cluster not bootstrapped, please start TiKV first\n"},
		read: getStores, is: pdapi.ErrTiKVNotBootstrapped, status: 500,
	}, {
		name: "stores 500 with text", answer: answer{500, `"[PD:server:ErrServerNotStarted]server not started"`},
		read: getStores, status: 500, contains: []string{"ErrServerNotStarted]server not started"},
	}, {
		name: "stores 400 errcode body", answer: answer{400, pdInvalidInputJSON},
		read: getStores, status: 400, contains: []string{"input: json: cannot unmarshal"},
	}, {
		name: "stores bad JSON", answer: ok(`{"count": 1, "stores": [{"store": {"id": "x"}}]}`),
		read: getStores, contains: []string{"GetStores", "/pd/api/v1/stores", "decode"},
	}, {
		name: "stores truncated JSON", answer: ok(`{"count": 1, "stores": [`),
		read: getStores, contains: []string{"decode", "unexpected end"},
	}, {
		name: "stores null element", answer: ok(`{"count": 1, "stores": [null]}`),
		read: getStores, contains: []string{"stores[0]", "no store object"},
	}, {
		name: "members null element", answer: ok(`{"members": [null]}`),
		read:     func(c pdapi.Client) error { _, err := c.GetMembers(context.Background()); return err },
		contains: []string{"members[0] is null"},
	}, {
		name: "health is not an array", answer: ok(`{"health": true}`),
		read:     func(c pdapi.Client) error { _, err := c.GetHealth(context.Background()); return err },
		contains: []string{"GetHealth", "decode"},
	}, {
		name: "no leader", answer: answer{503, `"[PD:server:ErrLeaderNil]leader is nil"`},
		read:   func(c pdapi.Client) error { _, err := c.GetLeader(context.Background()); return err },
		status: 503, contains: []string{"503 Service Unavailable: [PD:server:ErrLeaderNil]leader is nil"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pd := newStubPD(t, map[string]answer{
				"GET /pd/api/v1/stores": tc.answer, "GET /pd/api/v1/members": tc.answer,
				"GET /pd/api/v1/health": tc.answer, "GET /pd/api/v1/leader": tc.answer,
			})
			err := tc.read(pd.client())
			assertError(t, err, tc.is, tc.status, tc.contains...)
		})
	}
}

func getStores(c pdapi.Client) error {
	_, err := c.GetStores(context.Background())
	return err
}

func TestGetStoreNotFound(t *testing.T) {
	t.Parallel()
	pd := newStubPD(t, map[string]answer{"GET /pd/api/v1/store/42": {404, pdStoreNotFoundJSON}})
	_, err := pd.client().GetStore(context.Background(), 42)
	assertError(t, err, pdapi.ErrNotFound, 404, "GetStore", "/pd/api/v1/store/42", "store 42 not found")
	if errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
		t.Error("a missing store must not read as not bootstrapped")
	}
}

func TestReadTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	blocking := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answer only when the client gives up
	}))
	t.Cleanup(blocking.Close)

	_, err := pdapi.NewClient(blocking.URL, 50*time.Millisecond, nil).GetHealth(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Client.Timeout exceeded") || !strings.Contains(err.Error(), "/pd/api/v1/health") {
		t.Errorf("client timeout: err = %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = pdapi.NewClient(blocking.URL, time.Minute, nil).GetMembers(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ctx deadline: err = %v, want context.DeadlineExceeded", err)
	}

	viaControl := pdapi.NewControl(nil, 50*time.Millisecond).GetPDClient("ns", "basic", pdapi.ClusterOptions{ClientURL: blocking.URL})
	if _, err = viaControl.GetCluster(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Control client timeout: err = %v, want context.DeadlineExceeded", err)
	}
}

func TestGetReady(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answer  *answer
		want    bool
		wantErr bool
	}{
		{name: "200 ready", answer: &answer{200, ""}, want: true},
		{name: "404 API missing in old PD", answer: nil, want: true},
		{name: "500 not ready", answer: &answer{500, ""}, want: false},
		{name: "503 from a proxy is an error", answer: &answer{503, "upstream unavailable"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			answers := map[string]answer{}
			if tc.answer != nil {
				answers["GET /pd/api/v2/ready"] = *tc.answer
			}
			got, err := newStubPD(t, answers).client().GetReady(context.Background())
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("GetReady = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
	_, err := pdapi.NewClient("http://127.0.0.1:1", time.Second, nil).GetReady(context.Background())
	if err == nil {
		t.Error("GetReady with PD unreachable must fail")
	}
}

func TestGetEvictLeaderSchedulers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answers map[string]answer
		want    []uint64
		is      error
	}{{
		name:    "one scheduler per store",
		answers: map[string]answer{"GET /pd/api/v1/schedulers": ok(pdSchedulersJSON)},
		want:    []uint64{1, 4},
	}, {
		name: "combined scheduler expanded through its config",
		answers: map[string]answer{
			"GET /pd/api/v1/schedulers":                                   ok(pdSchedulersCombinedJSON),
			"GET /pd/api/v1/scheduler-config/evict-leader-scheduler/list": ok(pdEvictLeaderListJSON),
		},
		want: []uint64{2, 9},
	}, {
		name: "combined scheduler gone before its config is read",
		answers: map[string]answer{
			"GET /pd/api/v1/schedulers":                                   ok(pdSchedulersCombinedJSON),
			"GET /pd/api/v1/scheduler-config/evict-leader-scheduler/list": {404, pdSchedulerNotFoundJSON},
		},
		want: []uint64{},
	}, {
		name:    "none",
		answers: map[string]answer{"GET /pd/api/v1/schedulers": ok(`["balance-leader-scheduler"]`)},
		want:    []uint64{},
	}, {
		name:    "not bootstrapped",
		answers: map[string]answer{"GET /pd/api/v1/schedulers": {500, pdNotBootstrappedJSON}},
		is:      pdapi.ErrTiKVNotBootstrapped,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := newStubPD(t, tc.answers).client().GetEvictLeaderSchedulers(context.Background())
			if tc.is != nil {
				assertError(t, err, tc.is, 0, "GetEvictLeaderSchedulers")
				return
			}
			check(t, "GetEvictLeaderSchedulers", err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GetEvictLeaderSchedulers (-want +got):\n%s", diff)
			}
		})
	}
}

// check fails the test on an unexpected error.
func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

// assertError checks that err wraps is (when set), carries status (when set) and mentions every text.
func assertError(t *testing.T, err error, is error, status int, contains ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got nil")
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("error %q does not wrap %q", err, is)
	}
	var se *pdapi.StatusError
	if status != 0 && (!errors.As(err, &se) || se.StatusCode != status) {
		t.Errorf("error %q: want a StatusError with status %d", err, status)
	}
	for _, text := range contains {
		if !strings.Contains(err.Error(), text) {
			t.Errorf("error %q does not mention %q", err, text)
		}
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
