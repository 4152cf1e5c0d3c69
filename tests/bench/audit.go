//go:build bench

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// OperatorUser is the identity the operator runs as during the bench: the
// CN of its client certificate and the only user the audit policy logs.
const OperatorUser = "kubetidb-operator"

// auditPolicy logs, at Metadata level, every request of the operator's user
// and nothing else; a TidbCluster status write is logged with its body
// (level Request), so the audit log shows what each one carried. RequestReceived is omitted, so a request is one event
// (a watch is two: ResponseStarted and ResponseComplete; they share an auditID).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  users: ["` + OperatorUser + `"]
  verbs: ["patch", "update"]
  resources: [{group: pingcap.com, resources: ["tidbclusters/status"]}]
- level: Metadata
  users: ["` + OperatorUser + `"]
- level: None
`

// auditEvent is the part of an audit.k8s.io/v1 Event the bench reads.
type auditEvent struct {
	AuditID    string `json:"auditID"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// Request is one API request of the operator, deduplicated by auditID.
type Request struct {
	Time time.Time
	Verb string
	// Resource is "<resource>" or "<resource>/<subresource>".
	Resource  string
	Namespace string
	Name      string
	URI       string
	Code      int
}

// AuditLog follows the apiserver's JSON audit log as it grows. Safe for
// concurrent use.
type AuditLog struct {
	path string

	mu      sync.Mutex
	offset  int64
	partial []byte
	byID    map[string]int
	reqs    []Request
}

// NewAuditLog follows the audit log at path (which may not exist yet).
func NewAuditLog(path string) *AuditLog {
	return &AuditLog{path: path, byID: map[string]int{}}
}

// Poll reads the lines appended since the last Poll and returns how many
// requests are known now. A missing file is not an error: the apiserver
// creates it on the first audited request.
func (a *AuditLog) Poll() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(a.path)
	if errors.Is(err, os.ErrNotExist) {
		return len(a.reqs), nil
	}
	if err != nil {
		return 0, fmt.Errorf("open audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return 0, fmt.Errorf("seek audit log: %w", err)
	}
	buf, err := io.ReadAll(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("read audit log: %w", err)
	}
	a.offset += int64(len(buf))
	data := append(a.partial, buf...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		a.partial = data
		return len(a.reqs), nil
	}
	a.partial = append([]byte(nil), data[last+1:]...)
	for _, line := range bytes.Split(data[:last], []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return 0, fmt.Errorf("decode audit event: %w", err)
		}
		a.add(ev)
	}
	return len(a.reqs), nil
}

// add records ev, or completes the request it belongs to: a watch's
// ResponseComplete carries the same auditID as its ResponseStarted.
func (a *AuditLog) add(ev auditEvent) {
	if ev.User.Username != OperatorUser {
		return
	}
	code := 0
	if ev.ResponseStatus != nil {
		code = ev.ResponseStatus.Code
	}
	if i, ok := a.byID[ev.AuditID]; ok {
		if code != 0 {
			a.reqs[i].Code = code
		}
		return
	}
	r := Request{Time: ev.RequestReceived, Verb: ev.Verb, URI: ev.RequestURI, Code: code}
	if o := ev.ObjectRef; o != nil {
		r.Resource, r.Namespace, r.Name = o.Resource, o.Namespace, o.Name
		if o.Subresource != "" {
			r.Resource += "/" + o.Subresource
		}
	}
	a.byID[ev.AuditID] = len(a.reqs)
	a.reqs = append(a.reqs, r)
}

// Between returns the requests received in [from, to).
func (a *AuditLog) Between(from, to time.Time) []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Request
	for _, r := range a.reqs {
		if !r.Time.Before(from) && r.Time.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// isWrite reports whether verb changes state.
func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// isLease reports whether r is a leader-election request.
func isLease(r Request) bool { return r.Resource == "leases" }

// isEvent reports whether r is about a core or events.k8s.io Event.
func isEvent(r Request) bool { return r.Resource == "events" }

// clusterWrites returns the writes to objects in the benchmarked clusters'
// namespaces (every namespace starting with prefix), Events included.
func clusterWrites(reqs []Request, prefix string) []Request {
	var out []Request
	for _, r := range reqs {
		if isWrite(r.Verb) && strings.HasPrefix(r.Namespace, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// countBy counts requests by "<verb> <resource>".
func countBy(reqs []Request) map[string]int {
	out := map[string]int{}
	for _, r := range reqs {
		out[r.Verb+" "+r.Resource]++
	}
	return out
}

// filter returns the requests for which keep is true.
func filter(reqs []Request, keep func(Request) bool) []Request {
	var out []Request
	for _, r := range reqs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// conflicts counts 409 answers.
func conflicts(reqs []Request) int {
	return len(filter(reqs, func(r Request) bool { return r.Code == 409 }))
}

// peakRate returns the largest number of requests received within one
// wall-clock second: a sustained peak at the client's QPS means throttling.
func peakRate(reqs []Request) int {
	per := map[int64]int{}
	best := 0
	for _, r := range reqs {
		s := r.Time.Unix()
		per[s]++
		best = max(best, per[s])
	}
	return best
}

// Informer is one list/watch stream the operator opened.
type Informer struct {
	Resource      string `json:"resource"`
	Namespace     string `json:"namespace"`
	LabelSelector string `json:"labelSelector"`
	Lists         int    `json:"lists"`
	Watches       int    `json:"watches"`
}

// listWatches groups the operator's lists and watches by resource, namespace
// and label selector: an informer without a selector caches every object of
// its kind in the cluster.
func listWatches(reqs []Request) []Informer {
	byKey := map[string]*Informer{}
	for _, r := range reqs {
		if r.Verb != "list" && r.Verb != "watch" {
			continue
		}
		sel := ""
		if u, err := url.Parse(r.URI); err == nil {
			sel = u.Query().Get("labelSelector")
		}
		ns := r.Namespace
		if ns == "" {
			ns = "*"
		}
		key := r.Resource + "|" + ns + "|" + sel
		inf, ok := byKey[key]
		if !ok {
			inf = &Informer{Resource: r.Resource, Namespace: ns, LabelSelector: sel}
			byKey[key] = inf
		}
		if r.Verb == "list" {
			inf.Lists++
		} else {
			inf.Watches++
		}
	}
	out := make([]Informer, 0, len(byKey))
	for _, inf := range byKey {
		out = append(out, *inf)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Resource != out[j].Resource {
			return out[i].Resource < out[j].Resource
		}
		return out[i].Namespace+out[i].LabelSelector < out[j].Namespace+out[j].LabelSelector
	})
	return out
}
