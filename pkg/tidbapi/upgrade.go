package tidbapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// UpgradeTimeout bounds one smooth-upgrade switch: TiDB answers
// `/upgrade/start` only once its DDL owner saw the cluster enter the
// upgrading state, which it waits up to 10 s for.
const UpgradeTimeout = 30 * time.Second

// The answers (JSON strings) with which TiDB accepts a switch: done now, or
// already in the state asked for (a retry after a lost answer or an
// operator restart).
const (
	upgradeDone           = "success!"
	upgradeAlreadyStarted = "It's a duplicated operation and the cluster is already in upgrading state."
	upgradeAlreadyNormal  = "It's a duplicated operation and the cluster is already in normal state."
)

// UpgradeSwitch switches a TiDB cluster's smooth-upgrade mode, in which
// TiDB pauses user DDL while its servers run mixed versions (TiDB ≥ v7.1.2;
// the mode is the whole cluster's, so any healthy server may be asked).
// Client implementations that talk to TiDB implement it; the fake records
// the calls.
type UpgradeSwitch interface {
	// StartUpgrade sends the pod `POST /upgrade/start` (no body) and returns
	// nil once TiDB answers 200 with "success!" or that the cluster already
	// is upgrading. Any other answer, an unreachable pod or UpgradeTimeout
	// passing is an error naming the URL (and TiDB's status and text); the
	// caller retries, which is safe because a second start is accepted.
	StartUpgrade(ctx context.Context, namespace, tcName, podName string, opts Options) error
	// FinishUpgrade sends `POST /upgrade/finish` and returns nil once TiDB
	// answers 200 with "success!" or that the cluster already is normal
	// (user DDL resumes); errors as StartUpgrade.
	FinishUpgrade(ctx context.Context, namespace, tcName, podName string, opts Options) error
}

var _ UpgradeSwitch = &client{}

// StartUpgrade implements UpgradeSwitch.
func (c *client) StartUpgrade(ctx context.Context, namespace, tcName, podName string, opts Options) error {
	return c.switchUpgrade(ctx, namespace, tcName, podName, opts, "start", upgradeAlreadyStarted)
}

// FinishUpgrade implements UpgradeSwitch.
func (c *client) FinishUpgrade(ctx context.Context, namespace, tcName, podName string, opts Options) error {
	return c.switchUpgrade(ctx, namespace, tcName, podName, opts, "finish", upgradeAlreadyNormal)
}

func (c *client) switchUpgrade(ctx context.Context, namespace, tcName, podName string, opts Options, op, already string) error {
	url := StatusURL(namespace, tcName, podName, opts) + "/upgrade/" + op
	status, body, err := c.upgrade.ReadAll(ctx, podhttp.NewRequest(http.MethodPost, url, namespace, tcName, opts))
	if err == nil && status != http.StatusOK {
		err = podhttp.StatusError(http.MethodPost, url, status, body)
	}
	if err == nil {
		var answer string
		if json.Unmarshal(body, &answer) != nil || !slices.Contains([]string{upgradeDone, already}, answer) {
			err = fmt.Errorf("POST %s: unexpected answer %q", url, podhttp.Snippet(body))
		}
	}
	if err != nil {
		return pdapi.Trace(fmt.Errorf("tidb %s upgrade %s: %w", op, podName, err))
	}
	return nil
}

var _ UpgradeSwitch = &FakeClient{}

// StartUpgrade implements UpgradeSwitch: it records the call and fails
// with the pod's injected error (SetError).
func (f *FakeClient) StartUpgrade(_ context.Context, namespace, tcName, podName string, opts Options) error {
	_, err := f.pods.Record(Call{Method: "StartUpgrade", Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}, namespace, podName)
	return err
}

// FinishUpgrade implements UpgradeSwitch like StartUpgrade.
func (f *FakeClient) FinishUpgrade(_ context.Context, namespace, tcName, podName string, opts Options) error {
	_, err := f.pods.Record(Call{Method: "FinishUpgrade", Namespace: namespace, TCName: tcName, PodName: podName, Options: opts}, namespace, podName)
	return err
}
