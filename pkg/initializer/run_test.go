package initializer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/socks5"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
	"github.com/kubetidb/tidb-operator/tests/sqlserver"
)

// The tests run the program against a real MariaDB (tests/sqlserver)
// reached only through a SOCKS5 proxy named by ALL_PROXY that serves
// tc's TiDB Service on port 4000, as the Job reaches TiDB in the
// integration tests. The tests share the server and run one at a time.
var (
	server *sqlserver.Server
	served = tidbsql.Target{Addr: tidbsql.ServiceAddr("ns", "tc", 0)}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	server, err = sqlserver.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer server.Stop()
	proxyServer, err := socks5.Listen("127.0.0.1:0", func(host string, port int) (string, error) {
		if host == "tc-tidb.ns.svc" && port == tidbsql.DefaultPort {
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

const (
	rootPassword = "r00t'pw\\x"
	appPassword  = "app pw"
	initSQL      = "CREATE DATABASE hello; CREATE TABLE hello.runs (id INT);\nINSERT INTO hello.runs VALUES (1);\n" +
		"GRANT SELECT ON hello.* TO 'app'@'%';"
)

// reset makes the server a new cluster again, as administrator: root@'%'
// with the empty password and every privilege, no other account, no
// database hello.
func reset(t *testing.T) {
	t.Helper()
	db, err := server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		"DROP DATABASE IF EXISTS hello", "DROP USER IF EXISTS 'app'@'%', 'root'@'127.0.0.1'",
		"CREATE USER IF NOT EXISTS 'root'@'%'", "ALTER USER 'root'@'%' IDENTIFIED BY ''",
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// admin runs a query returning one integer as administrator.
func admin(t *testing.T, query string) int {
	t.Helper()
	db, err := server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func options(log *bytes.Buffer) Options {
	return Options{
		Target: served, Users: Users{"root": rootPassword, "app": appPassword}, InitSQL: initSQL,
		Wait: time.Second, RetryInterval: 100 * time.Millisecond, Log: log,
	}
}

func runOK(t *testing.T, o Options) {
	t.Helper()
	if err := Run(t.Context(), o); err != nil {
		t.Fatalf("Run: %v\nlog:\n%s", err, o.Log)
	}
}

func checkLogin(t *testing.T, user, password string, want error) {
	t.Helper()
	err := tidbsql.CheckPassword(t.Context(), served, user, password)
	if (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
		t.Errorf("login as %s: %v, want %v", user, err, want)
	}
}

// TestRunInitializesOnce: a new cluster gets root's password (the empty
// one refused), the user app with its password and the init SQL's effects
// (grants included); a second run succeeds and changes nothing (one row).
// No password reaches the log.
func TestRunInitializesOnce(t *testing.T) {
	reset(t)
	var log bytes.Buffer
	runOK(t, options(&log))
	checkLogin(t, "root", "", tidbsql.ErrAccessDenied)
	checkLogin(t, "root", rootPassword, nil)
	checkLogin(t, "app", appPassword, nil)
	if n := admin(t, "SELECT COUNT(*) FROM hello.runs"); n != 1 {
		t.Errorf("hello.runs has %d rows after one run, want 1", n)
	}
	if n := admin(t, "SELECT COUNT(*) FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = \"'app'@'%'\" AND TABLE_SCHEMA = 'hello' AND PRIVILEGE_TYPE = 'SELECT'"); n != 1 {
		t.Errorf("app has no SELECT on hello (%d)", n)
	}

	log.Reset()
	runOK(t, options(&log))
	if n := admin(t, "SELECT COUNT(*) FROM hello.runs"); n != 1 {
		t.Errorf("hello.runs has %d rows after a second run, want 1: the init SQL ran again", n)
	}
	if !strings.Contains(log.String(), "already has passwordSecret's password") {
		t.Errorf("the second run did not see the earlier one:\n%s", log.String())
	}
	checkLogin(t, "root", rootPassword, nil)
	for _, secret := range []string{rootPassword, appPassword} {
		if strings.Contains(log.String(), secret) {
			t.Errorf("the log holds a password:\n%s", log.String())
		}
	}
}

// TestRunRestrictsRootToPermitHost: root@permitHost gets root's password
// and every privilege, root@'%' goes, and a second run (from within
// permitHost) changes nothing.
func TestRunRestrictsRootToPermitHost(t *testing.T) {
	reset(t)
	var log bytes.Buffer
	o := options(&log)
	o.PermitHost = "127.0.0.1" // where MariaDB sees the proxy's connections from
	runOK(t, o)
	if n := admin(t, "SELECT COUNT(*) FROM mysql.user WHERE User = 'root' AND Host = '%'"); n != 0 {
		t.Error("root@'%' is still there")
	}
	if n := admin(t, "SELECT COUNT(*) FROM mysql.user WHERE User = 'root' AND Host = '127.0.0.1' AND Grant_priv = 'Y' AND Super_priv = 'Y'"); n != 1 {
		t.Error("root@'127.0.0.1' is missing or lacks privileges")
	}
	checkLogin(t, "root", rootPassword, nil)
	checkLogin(t, "root", "", tidbsql.ErrAccessDenied)

	log.Reset()
	runOK(t, o)
	if strings.Contains(log.String(), "created") || strings.Contains(log.String(), "dropped") {
		t.Errorf("the second run changed something:\n%s", log.String())
	}
	if n := admin(t, "SELECT COUNT(*) FROM hello.runs"); n != 1 {
		t.Errorf("hello.runs has %d rows, want 1", n)
	}
}

// TestRunRefusesAnUnknownRootPassword: root with a password that is
// neither empty nor the Secret's is an access-denied error at once, with
// nothing changed.
func TestRunRefusesAnUnknownRootPassword(t *testing.T) {
	reset(t)
	db, err := server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ALTER USER 'root'@'%' IDENTIFIED BY 'someone else'"); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	o := options(&log)
	o.Wait = time.Minute // access denied is never retried
	start := time.Now()
	err = Run(t.Context(), o)
	if !errors.Is(err, tidbsql.ErrAccessDenied) || !strings.Contains(err.Error(), "refuses both") {
		t.Fatalf("Run: %v, want access denied for both passwords", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("an access denied was retried (%v)", took)
	}
	if n := admin(t, "SELECT COUNT(*) FROM mysql.user WHERE User = 'app'"); n != 0 {
		t.Error("user app was created")
	}
}

// TestRunFailedInitSQLLeavesRootEmpty: a failing init SQL fails the run
// before root's password is set, so a run with the SQL fixed applies it.
func TestRunFailedInitSQLLeavesRootEmpty(t *testing.T) {
	reset(t)
	var log bytes.Buffer
	o := options(&log)
	o.InitSQL = "CREATE DATABASE hello; CREATE TABLE nowhere.t (id INT);"
	if err := Run(t.Context(), o); err == nil || !strings.Contains(err.Error(), "init SQL") {
		t.Fatalf("Run: %v, want an init SQL error", err)
	}
	checkLogin(t, "root", "", nil)
	o.InitSQL = "DROP DATABASE hello; " + initSQL
	runOK(t, o)
	checkLogin(t, "root", rootPassword, nil)
	if n := admin(t, "SELECT COUNT(*) FROM hello.runs"); n != 1 {
		t.Errorf("hello.runs has %d rows, want 1", n)
	}
}

// TestRunGivesUpOnAnUnansweredTiDB: a TiDB that does not answer is retried
// until Wait has passed, then the dial error is returned.
func TestRunGivesUpOnAnUnansweredTiDB(t *testing.T) {
	var log bytes.Buffer
	o := options(&log)
	o.Target = tidbsql.Target{Addr: tidbsql.ServiceAddr("ns", "absent", 0)}
	o.Wait = 300 * time.Millisecond
	err := Run(t.Context(), o)
	if err == nil || errors.Is(err, tidbsql.ErrAccessDenied) {
		t.Fatalf("Run: %v, want a dial error", err)
	}
	if !strings.Contains(log.String(), "retrying") {
		t.Errorf("no retry logged:\n%s", log.String())
	}
}
