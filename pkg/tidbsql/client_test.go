package tidbsql

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/socks5"
	"github.com/kubetidb/tidb-operator/tests/sqlserver"
)

// The tests reach a real MariaDB (tests/sqlserver) only through a SOCKS5
// proxy named by ALL_PROXY, which serves tc's TiDB Service on port 4000 and
// refuses every other target: the operator's path in the integration tests.
var (
	server *sqlserver.Server
	served = Target{Addr: ServiceAddr("ns", "tc", 0)}
	pki    *testPKI // the server's TLS certificate is for served's host
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tidbsql-tls-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	var tlsArgs []string
	if pki, err = newTestPKI("tc-tidb.ns.svc"); err == nil {
		tlsArgs, err = pki.serverArgs(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	server, err = sqlserver.Start(context.Background(), tlsArgs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer server.Stop()
	proxyServer, err := socks5.Listen("127.0.0.1:0", func(host string, port int) (string, error) {
		if host == "tc-tidb.ns.svc" && port == DefaultPort {
			return server.Addr, nil
		}
		return "", socks5.ErrRefused
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer proxyServer.Close()
	// Before the first dial: golang.org/x/net/proxy reads ALL_PROXY once.
	os.Setenv("ALL_PROXY", "socks5://"+proxyServer.Addr())
	os.Unsetenv("NO_PROXY")
	os.Unsetenv("no_proxy")
	return m.Run()
}

// resetRoot gives 'root'@'%' an empty password again, as administrator.
func resetRoot(t *testing.T) {
	t.Helper()
	db, err := server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ALTER USER 'root'@'%' IDENTIFIED BY ''"); err != nil {
		t.Fatal(err)
	}
}

func TestServiceAddr(t *testing.T) {
	t.Parallel()
	if got := ServiceAddr("ns", "basic", 0); got != "basic-tidb.ns.svc:4000" {
		t.Errorf("default port: %s", got)
	}
	if got := ServiceAddr("ns", "basic", 3306); got != "basic-tidb.ns.svc:3306" {
		t.Errorf("port 3306: %s", got)
	}
}

// TestSetRootPassword: a new cluster's root logs in with an empty password;
// after SetRootPassword only the new password (with quotes, a backslash and
// a question mark, escaped by the driver) logs in, and setting it again from
// the empty password is refused as access denied.
func TestSetRootPassword(t *testing.T) {
	ctx := context.Background()
	t.Cleanup(func() { resetRoot(t) })
	if err := CheckPassword(ctx, served, RootUser, ""); err != nil {
		t.Fatalf("fresh root with an empty password: %v", err)
	}
	const password = `pa'ss"wo\rd?x`
	if err := SetRootPassword(ctx, served, "", password); err != nil {
		t.Fatal(err)
	}
	if err := CheckPassword(ctx, served, RootUser, password); err != nil {
		t.Errorf("the new password: %v", err)
	}
	if err := CheckPassword(ctx, served, RootUser, ""); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("the empty password after the change: %v, want ErrAccessDenied", err)
	}
	if err := SetRootPassword(ctx, served, "", "other"); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("a second change from the empty password: %v, want ErrAccessDenied", err)
	}
	if err := CheckPassword(ctx, served, RootUser, password); err != nil {
		t.Errorf("the password after a refused change: %v", err)
	}
}

// TestSetPasswordErrorHidesPassword: a failing ALTER USER (no such user)
// errors without the password in the message.
func TestSetPasswordErrorHidesPassword(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, served, RootUser, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = SetPassword(ctx, db, "nobody", "secret-value")
	if err == nil {
		t.Fatal("ALTER USER of a missing user succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "secret-value") {
		t.Errorf("error shows the password: %s", msg)
	}
}

// TestTLS: with the client Secret's CA and certificate the connection is
// encrypted and the server's certificate is verified against the Service
// name; a CA that did not sign the server's certificate is refused.
func TestTLS(t *testing.T) {
	ctx := context.Background()
	cfg, err := TLSConfigFromSecretData(pki.secretData(), false)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, Target{Addr: served.Addr, TLS: cfg}, RootUser, "")
	if err != nil {
		t.Fatalf("TLS login: %v", err)
	}
	defer func() { _ = db.Close() }()
	var name, cipher string
	if err := db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		t.Fatal(err)
	}
	if cipher == "" {
		t.Error("the connection is not encrypted")
	}
	other, err := newTestPKI("tc-tidb.ns.svc")
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := TLSConfigFromSecretData(other.secretData(), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPassword(ctx, Target{Addr: served.Addr, TLS: wrong}, RootUser, ""); err == nil ||
		errors.Is(err, ErrAccessDenied) {
		t.Errorf("a foreign CA: %v, want a certificate error", err)
	}
}

// TestTLSSkipCA (spec.tidb.tlsClient.skipInternalClientCA): with a Secret
// whose CA did not sign the server's certificate, or with no CA at all, the
// client connects encrypted with skipCA while verifying is refused; and the
// client certificate is still presented: a user REQUIRE X509 logs in with
// it, and not without it.
func TestTLSSkipCA(t *testing.T) {
	ctx := context.Background()
	other, err := newTestPKI("tc-tidb.ns.svc")
	if err != nil {
		t.Fatal(err)
	}
	foreignCA := pki.secretData()
	foreignCA[SecretCAKey] = other.caCert
	if cfg, err := TLSConfigFromSecretData(foreignCA, false); err != nil {
		t.Fatal(err)
	} else if err := CheckPassword(ctx, Target{Addr: served.Addr, TLS: cfg}, RootUser, ""); err == nil {
		t.Fatal("a foreign CA verifying: logged in, want a certificate error")
	}
	skip, err := TLSConfigFromSecretData(foreignCA, true)
	if err != nil {
		t.Fatal(err)
	}
	assertEncrypted(ctx, t, Target{Addr: served.Addr, TLS: skip}, RootUser)

	noCA := pki.secretData()
	delete(noCA, SecretCAKey)
	withCert, err := TLSConfigFromSecretData(noCA, true)
	if err != nil {
		t.Fatal(err)
	}
	createX509User(t, "x509user")
	assertEncrypted(ctx, t, Target{Addr: served.Addr, TLS: withCert}, "x509user")
	noCert, err := TLSConfigFromSecretData(map[string][]byte{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPassword(ctx, Target{Addr: served.Addr, TLS: noCert}, "x509user", ""); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("REQUIRE X509 without a client certificate: %v, want ErrAccessDenied", err)
	}
}

// assertEncrypted logs in to t as user with an empty password and checks
// that the session is encrypted.
func assertEncrypted(ctx context.Context, t *testing.T, target Target, user string) {
	t.Helper()
	db, err := Open(ctx, target, user, "")
	if err != nil {
		t.Fatalf("TLS login as %s: %v", user, err)
	}
	defer func() { _ = db.Close() }()
	var name, cipher string
	if err := db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		t.Fatal(err)
	}
	if cipher == "" {
		t.Errorf("%s: the connection is not encrypted", user)
	}
}

// createX509User creates user@'%' with an empty password that may log in
// only with a client certificate the server's CA signed; dropped at cleanup.
func createX509User(t *testing.T, user string) {
	t.Helper()
	db, err := server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE USER '" + user + "'@'%' REQUIRE X509"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if db, err := server.Admin(); err == nil {
			_, _ = db.Exec("DROP USER '" + user + "'@'%'")
			_ = db.Close()
		}
	})
}

// TestRefusedTarget: a target the proxy does not serve fails as a dial
// error, not as access denied.
func TestRefusedTarget(t *testing.T) {
	err := CheckPassword(context.Background(), Target{Addr: ServiceAddr("ns", "other", 0)}, RootUser, "")
	if err == nil || errors.Is(err, ErrAccessDenied) {
		t.Errorf("err %v, want a dial error", err)
	}
}

// TestCanceledContext: a canceled context ends Open at once.
func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := CheckPassword(ctx, served, RootUser, ""); err == nil {
		t.Error("a canceled context logged in")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
