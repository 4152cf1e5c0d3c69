package command

import (
	"fmt"
	"strconv"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// Login is how dumpling or Lightning logs in to TiDB: the CR's from/to with
// the password read from its Secret.
type Login struct {
	Access   v1alpha1.TiDBAccessConfig
	Password string
	// ClientTLS adds TiDB client certificate flags (the Job's --client-tls).
	ClientTLS bool
}

// hostPortUser are the access fields with TiDB's defaults: port 4000, user root.
func (l Login) hostPortUser() (string, string, string) {
	port := l.Access.Port
	if port == 0 {
		port = 4000
	}
	user := l.Access.User
	if user == "" {
		user = "root"
	}
	return l.Access.Host, strconv.Itoa(int(port)), user
}

// Dumpling is the dumpling command line of an export of b to loc: TiDB's
// address and credentials, --output with the storage flags, table filters
// (spec.tableFilter, else the deprecated spec.dumpling.tableFilter), then
// spec.dumpling.options. It errors for a backup without spec.from.
func Dumpling(b *v1alpha1.Backup, loc storage.Location, login Login) ([]string, error) {
	if b.Spec.From == nil {
		return nil, fmt.Errorf("backup %s/%s has no spec.from", b.Namespace, b.Name)
	}
	host, port, user := login.hostPortUser()
	args := []string{"--host=" + host, "--port=" + port, "--user=" + user, "--password=" + login.Password}
	if login.ClientTLS {
		args = append(args, "--ca="+ClientTLSDir+"/ca.crt", "--cert="+ClientTLSDir+"/tls.crt", "--key="+ClientTLSDir+"/tls.key")
	}
	args = append(args, "--output="+StorageURL(loc))
	args = append(args, StorageFlags(loc)...)
	rules := b.Spec.TableFilter
	if len(rules) == 0 && b.Spec.Dumpling != nil {
		rules = b.Spec.Dumpling.TableFilter
	}
	args = append(args, filters(rules)...)
	if b.Spec.Dumpling != nil {
		args = append(args, b.Spec.Dumpling.Options...)
	}
	return args, nil
}

// Lightning is the TiDB Lightning command line of an import of r from loc
// (TiDB backend): TiDB's address and credentials, -d with the storage
// options in the URL, table filters. It errors for a restore without spec.to.
func Lightning(r *v1alpha1.Restore, loc storage.Location, login Login) ([]string, error) {
	if r.Spec.To == nil {
		return nil, fmt.Errorf("restore %s/%s has no spec.to", r.Namespace, r.Name)
	}
	host, port, user := login.hostPortUser()
	args := []string{"--backend=tidb", "--tidb-host=" + host, "--tidb-port=" + port,
		"--tidb-user=" + user, "--tidb-password=" + login.Password}
	if login.ClientTLS {
		args = append(args, "--ca="+ClientTLSDir+"/ca.crt", "--cert="+ClientTLSDir+"/tls.crt", "--key="+ClientTLSDir+"/tls.key")
	}
	args = append(args, "-d="+StorageURLWithOptions(loc), "--check-requirements=false")
	return append(args, filters(r.Spec.TableFilter)...), nil
}

// Redact returns args with the value of every password flag replaced, for
// logging a command line.
func Redact(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, p := range []string{"--password=", "--tidb-password="} {
			if len(a) > len(p) && a[:len(p)] == p {
				a = p + "******"
			}
		}
		out[i] = a
	}
	return out
}
