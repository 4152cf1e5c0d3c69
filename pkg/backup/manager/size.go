package manager

import (
	"context"
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// listPageSize is the page size of listings that only sum sizes.
const listPageSize = 1000

// sizeOf opens loc's bucket and sums the sizes of every object under it.
func (m *Manager) sizeOf(ctx context.Context, loc storage.Location) (int64, error) {
	b, err := m.open(ctx, loc)
	if err != nil {
		return 0, err
	}
	defer func() { _ = b.Close() }()
	return SizeUnder(ctx, b, loc.ObjectPrefix())
}

// SizeUnder sums the sizes of the objects whose keys start with prefix. It
// errors when listing does.
func SizeUnder(ctx context.Context, b storage.Bucket, prefix string) (int64, error) {
	var total int64
	var token []byte
	for {
		objs, next, err := b.ListPage(ctx, prefix, token, listPageSize)
		if err != nil {
			return 0, err
		}
		for _, o := range objs {
			total += o.Size
		}
		if next == nil {
			return total, nil
		}
		token = next
	}
}

// HumanBytes is n in decimal units with one decimal (e.g. "1.9 MB"), as the
// readable sizes of the TiDB Operator read; bytes below 1000 as "512 B".
func HumanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(n) / unit
	i := 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
