// Package reader reads some of Widget's fields and writes one.
package reader

import "github.com/kubetidb/tidb-operator/hack/fieldcheck/testdata/api"

// Use reads size, inner.depth and labels (through the inline struct) and
// only writes inner.width.
func Use(w *api.Widget) int {
	w.Spec.Inner.Width = 3
	return w.Spec.Size + w.Spec.Inner.Depth + len(w.Spec.Labels)
}
