//go:build integration

// Package privilege checks, after the rest of the integration suite ran,
// that the Helm chart grants the operator what it uses and no more: it
// reads the API server's audit log (hack/test-integration.sh turns it on,
// audit-policy.yaml) for the requests of the chart's ServiceAccount and
// compares them with the rules the chart renders.
package privilege

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// unusedGrants are the rules the chart grants that a run of the suite may
// not make the operator send (a rare path, or a permission only granted on
// or checked by admission), each with the feature that needs it. A rule
// that is neither used nor listed here fails the test; an entry the run
// did use is logged (for some, timing decides).
var unusedGrants = map[string]string{
	// The apply layer reads an object from the API server only when its
	// create answered AlreadyExists while the cache lacked it (apply/kinds.go
	// fetch): a lagging cache, rare in a test.
	"get core/services":                          "apply: an existing Service the cache lacks",
	"get core/serviceaccounts":                   "apply: an existing ServiceAccount the cache lacks",
	"get rbac.authorization.k8s.io/roles":        "apply: an existing discovery/monitor Role the cache lacks",
	"get rbac.authorization.k8s.io/rolebindings": "apply: an existing RoleBinding the cache lacks",
	"get batch/jobs":                             "TidbInitializer: its Job's create answered AlreadyExists",
	"get pingcap.com/backups":                    "BackupSchedule: a Backup's create answered AlreadyExists",
	"list core/events":                           "why a StatefulSet has not created a member's pod (its FailedCreate events), only while one is missing",
	"update core/configmaps":                     "apply: a ConfigMap whose name stays while its data changes (InPlace config updates, TiProxy's reloaded config)",
	// RBAC lets a user grant only what it holds: the operator grants these
	// to the Roles it creates and never sends them itself.
	"get pingcap.com/tidbclusters": "granted on to each cluster's discovery Role (its own TidbCluster)",
	"list core/secrets":            "granted on to each cluster's discovery Role",
	"watch core/secrets":           "granted on to each cluster's discovery Role",
	"get core/endpoints":           "granted on to each TidbMonitor's Prometheus Role (pod discovery)",
	"list core/endpoints":          "granted on to each TidbMonitor's Prometheus Role (pod discovery)",
	"watch core/endpoints":         "granted on to each TidbMonitor's Prometheus Role (pod discovery)",
	// The OwnerReferencesPermissionEnforcement admission plugin (run by the
	// suite's API server, hack/local-cluster.sh) checks these when a child
	// with blockOwnerDeletion is written; no request of its own is audited.
	"update pingcap.com/tidbclusters/finalizers":      "blockOwnerDeletion on a TidbCluster's children",
	"update pingcap.com/backups/finalizers":           "blockOwnerDeletion on a Backup's Jobs",
	"update pingcap.com/restores/finalizers":          "blockOwnerDeletion on a Restore's Jobs",
	"update pingcap.com/backupschedules/finalizers":   "blockOwnerDeletion on a schedule's Backups",
	"update pingcap.com/compactbackups/finalizers":    "blockOwnerDeletion on a CompactBackup's Job",
	"update pingcap.com/tidbinitializers/finalizers":  "blockOwnerDeletion on the initializer's Job",
	"update pingcap.com/tidbmonitors/finalizers":      "blockOwnerDeletion on a monitor's children",
	"update pingcap.com/tidbdashboards/finalizers":    "blockOwnerDeletion on a dashboard's children",
	"update pingcap.com/tidbngmonitorings/finalizers": "blockOwnerDeletion on NG Monitoring's children",
	"update pingcap.com/dmclusters/finalizers":        "blockOwnerDeletion on a DM cluster's children",
	"get pingcap.com/dmclusters":                      "granted on to each DM cluster's discovery Role",
}

// auditEvent is the part of an audit.k8s.io/v1 Event this test reads.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	RequestURI string `json:"requestURI"`
	ObjectRef  *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
}

// grant is one (API group, resource[/subresource], verb), as RBAC rules
// and audit events both name it.
type grant struct{ group, resource, verb string }

func (g grant) String() string {
	group := g.group
	if group == "" {
		group = "core"
	}
	return g.verb + " " + group + "/" + g.resource
}

// operatorUser reports whether username is the chart's ServiceAccount in
// some namespace, as every test operator runs (tests/operator).
func operatorUser(username string) bool {
	return strings.HasPrefix(username, "system:serviceaccount:") &&
		strings.HasSuffix(username, ":"+operator.ChartServiceAccount)
}

// TestLeastPrivilege reads every request the operator sent during the
// suite: none may have been refused (403) for want of a permission, each
// must be granted by the chart in some mode, and each rule the chart
// grants must have been used or be listed in unusedGrants.
func TestLeastPrivilege(t *testing.T) {
	used, requests := readAudit(t)
	if requests < 1000 {
		t.Fatalf("the audit log holds %d requests of the operator; the suite sends tens of thousands (was it audited?)", requests)
	}
	granted := chartGrants(t)
	for g := range used {
		if !granted[g] {
			t.Errorf("the operator sent %s, which the chart does not grant", g)
		}
	}
	var unused []string
	for g := range granted {
		why, listed := unusedGrants[g.String()]
		switch {
		case used[g] && listed:
			t.Logf("unusedGrants lists %s (%s); this run used it", g, why) // timing decides for some
		case !used[g] && !listed:
			unused = append(unused, g.String())
		}
	}
	slices.Sort(unused)
	for _, g := range unused {
		t.Errorf("the chart grants %s, which no test used: drop the rule, cover it with a test, or list it in unusedGrants with the feature that needs it", g)
	}
	t.Logf("%d operator requests, %d (verb, resource) pairs used of %d granted", requests, len(used), len(granted))
}

// readAudit returns the (group, resource, verb) of every request the
// operator sent and how many there were, failing the test for each request
// the API server refused as forbidden (other than creates in a namespace
// being deleted, which RBAC did not refuse).
func readAudit(t *testing.T) (map[grant]bool, int) {
	t.Helper()
	dir := framework.StateDir()
	if dir == "" {
		t.Fatal("no state dir of the test cluster (run through hack/test-integration.sh)")
	}
	f, err := os.Open(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatalf("the audit log: %v", err)
	}
	defer func() { _ = f.Close() }()
	used := map[grant]bool{}
	forbidden := map[string]int{}
	requests := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit event %q: %v", sc.Text(), err)
		}
		if !operatorUser(e.User.Username) {
			continue
		}
		requests++
		if e.ResponseStatus != nil && e.ResponseStatus.Code == 403 && !strings.Contains(e.ResponseStatus.Message, "being terminated") {
			forbidden[e.Verb+" "+e.RequestURI]++
		}
		if e.ObjectRef == nil {
			continue // a non-resource URL (discovery, /version): granted to every authenticated user
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		used[grant{e.ObjectRef.APIGroup, res, e.Verb}] = true
		if e.Verb == "watch" {
			// client-go's informers stream their initial list as a watch
			// (WatchListClient) and fall back to a LIST where the API
			// server cannot: the same rule serves both.
			used[grant{e.ObjectRef.APIGroup, res, "list"}] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	for req, n := range forbidden {
		t.Errorf("the API server refused the operator %d time(s): %s", n, req)
	}
	return used, requests
}

// chartGrants renders the chart in both modes with its default values and
// returns every (group, resource, verb) its Roles and ClusterRoles grant.
func chartGrants(t *testing.T) map[grant]bool {
	t.Helper()
	out := map[grant]bool{}
	for _, scoped := range []string{"true", "false"} {
		cmd := operator.HelmCommand(context.Background(), t, "template", "kt", filepath.Join(framework.RepoRoot(), "charts", "tidb-operator"),
			"--namespace", "tidb-admin", "--set", "clusterScoped="+scoped, "--show-only", "templates/controller-manager-rbac.yaml")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("helm template clusterScoped=%s: %v\n%s", scoped, err, stderr.String())
		}
		for _, doc := range strings.Split(stdout.String(), "\n---") {
			var role struct {
				Kind  string              `json:"kind"`
				Rules []rbacv1.PolicyRule `json:"rules"`
			}
			if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
				t.Fatalf("rendered RBAC: %v\n%s", err, doc)
			}
			if role.Kind != "Role" && role.Kind != "ClusterRole" {
				continue
			}
			for _, r := range role.Rules {
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						for _, v := range r.Verbs {
							out[grant{g, res, v}] = true
						}
					}
				}
			}
		}
	}
	return out
}
