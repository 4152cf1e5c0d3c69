// Package api is a served kind for the check's own test: Widget's spec has
// fields read, written only, read through an inline struct, and unread.
package api

// Widget is a kind: it has a Spec and a Status.
type Widget struct {
	Spec   WidgetSpec   `json:"spec"`
	Status WidgetStatus `json:"status"`
}

// WidgetSpec is Widget's spec.
type WidgetSpec struct {
	Size   int    `json:"size"`
	Color  string `json:"color"`
	Inner  *Inner `json:"inner,omitempty"`
	Common `json:",inline"`
	Legacy string `json:"legacy"`
	Hidden string `json:"-"`
}

// Inner is a nested struct; only depth is read.
type Inner struct {
	Depth int `json:"depth"`
	Width int `json:"width"`
}

// Common is inlined into the spec.
type Common struct {
	Labels map[string]string `json:"labels"`
}

// WidgetStatus is Widget's status.
type WidgetStatus struct{}
