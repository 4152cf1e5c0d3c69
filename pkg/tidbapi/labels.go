package tidbapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// LabelSetter sets a TiDB server's labels; Client implementations that
// talk to TiDB implement it (the fake records the calls).
type LabelSetter interface {
	// SetLabels merges labels into the server labels of the pod (`POST /labels`, a JSON object of
	// strings, TiDB ≥ 6.3.0); GetInfo's Labels then reports them. Any failure, including an
	// unreachable pod or a status other than 200, is an error naming the URL.
	SetLabels(ctx context.Context, namespace, tcName, podName string, opts Options, labels map[string]string) error
}

// SetLabels implements LabelSetter.
func (c *client) SetLabels(ctx context.Context, namespace, tcName, podName string, opts Options, labels map[string]string) error {
	url := StatusURL(namespace, tcName, podName, opts) + "/labels"
	body, err := json.Marshal(labels)
	if err != nil {
		return fmt.Errorf("tidb SetLabels %s: encode: %w", podName, err)
	}
	req := podhttp.NewRequest(http.MethodPost, url, namespace, tcName, opts)
	req.Body = body
	status, answer, err := c.pods.ReadAll(ctx, req)
	if err == nil && status != http.StatusOK {
		err = podhttp.StatusError(http.MethodPost, url, status, answer)
	}
	if err != nil {
		return pdapi.Trace(fmt.Errorf("tidb SetLabels %s: %w", podName, err))
	}
	return nil
}

// SetLabels implements LabelSetter: the labels are merged into what GetInfo reports for the pod.
func (f *FakeClient) SetLabels(_ context.Context, namespace, tcName, podName string, opts Options, labels map[string]string) error {
	call := Call{Method: "SetLabels", Namespace: namespace, TCName: tcName, PodName: podName, Options: opts, Labels: joinLabels(labels)}
	if _, err := f.pods.Record(call, namespace, podName); err != nil {
		return err
	}
	f.pods.Update(namespace, podName, func(p *fakePod) {
		merged := maps.Clone(p.info.Labels)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, labels)
		p.info.Labels = merged
	})
	return nil
}

func joinLabels(labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}
