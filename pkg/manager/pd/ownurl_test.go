package pd

import (
	"fmt"
	"regexp"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestOwnMemberURLMatchesTheGrammar checks the string matcher against the
// regular expression of its doc comment, on URLs of the cluster, of other
// clusters and namespaces, and malformed ones.
func TestOwnMemberURLMatchesTheGrammar(t *testing.T) {
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns1"}}
	q := regexp.QuoteMeta
	oracle := regexp.MustCompile(fmt.Sprintf(`^https?://%s-pd-\d+\.%s-pd-peer\.%s\.svc(\..+)?:\d+$`,
		q(tc.Name), q(tc.Name), q(tc.Namespace)))
	urls := []string{
		"http://db-pd-0.db-pd-peer.ns1.svc:2379",
		"https://db-pd-12.db-pd-peer.ns1.svc:2379",
		"http://db-pd-0.db-pd-peer.ns1.svc.cluster.local:2379",
		"http://db-pd-0.db-pd-peer.ns1.svc.a:1:2",
		"http://db-pd-0.db-pd-peer.ns1.svc.:2379",
		"http://db-pd-0.db-pd-peer.ns1.svcx:2379",
		"http://db-pd-0.db-pd-peer.ns1.svc:",
		"http://db-pd-0.db-pd-peer.ns1.svc:23a9",
		"http://db-pd-0.db-pd-peer.ns1.svc",
		"http://db-pd-.db-pd-peer.ns1.svc:2379",
		"http://db-pd-x.db-pd-peer.ns1.svc:2379",
		"http://db-pd-0.db-pd-peer.ns2.svc:2379",
		"http://other-pd-0.other-pd-peer.ns1.svc:2379",
		"http://db-pd-0.other-pd-peer.ns1.svc:2379",
		"ftp://db-pd-0.db-pd-peer.ns1.svc:2379",
		"http://xdb-pd-0.db-pd-peer.ns1.svc:2379",
		"http://db-pd-0.db-pd-peer.ns1.svc:2379/",
		"http://10.0.0.1:2379",
		"http://db-pd-0.db-pd-peer.ns1.svc.a\nb:2379",
		"",
	}
	for _, u := range urls {
		if got, want := ownMemberURL(tc, u), oracle.MatchString(u); got != want {
			t.Errorf("ownMemberURL(%q) = %v, the grammar says %v", u, got, want)
		}
	}
}

func FuzzOwnMemberURL(f *testing.F) {
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns1"}}
	oracle := regexp.MustCompile(`^https?://db-pd-\d+\.db-pd-peer\.ns1\.svc(\..+)?:\d+$`)
	f.Add("http://db-pd-0.db-pd-peer.ns1.svc.cluster.local:2379")
	f.Fuzz(func(t *testing.T, u string) {
		if got, want := ownMemberURL(tc, u), oracle.MatchString(u); got != want {
			t.Errorf("ownMemberURL(%q) = %v, the grammar says %v", u, got, want)
		}
	})
}
