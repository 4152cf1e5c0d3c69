package pumpapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// ErrNoPump is returned (joined with each pump's error) by GetRegistry when no pump was asked.
var ErrNoPump = errors.New("no pump to ask for the binlog registry")

// GetRegistry asks the given pods of TidbCluster namespace/tcName for the registry, one at a time in the
// order given, and returns the first registry served and the pod that served it. Every pump serves the
// whole registry, so the first answer is as good as any; the caller orders the pods by how likely they
// answer. When none does it returns the errors of every pod joined (ErrNoPump when pods is empty), so a
// caller may tell an unreachable pump from one that answered without the registry. No retries.
func GetRegistry(ctx context.Context, c Client, namespace, tcName string, pods []string, opts Options) (*Status, string, error) {
	if len(pods) == 0 {
		return nil, "", ErrNoPump
	}
	var errs []error
	for _, pod := range pods {
		status, err := c.GetStatus(ctx, namespace, tcName, pod, opts)
		if err == nil {
			return status, pod, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, "", fmt.Errorf("no pump served the binlog registry: %w", errors.Join(errs...))
}

// Unreachable reports whether err says that no answer came from the pump (refused connection, timeout,
// reset): its process is not serving.
func Unreachable(err error) bool {
	var unreachable *podhttp.UnreachableError
	return errors.As(err, &unreachable)
}
