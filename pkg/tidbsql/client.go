// Package tidbsql is the operator's small SQL client of a TidbCluster's
// TiDB: its client Service `<tc>-tidb.<ns>.svc` on the MySQL port
// (spec.tidb.service.port, default 4000), over github.com/go-sql-driver/mysql.
// Connections go through the standard proxy environment for TCP
// (ALL_PROXY=socks5://…, NO_PROXY; golang.org/x/net/proxy), the way the HTTP
// clients honour HTTP_PROXY: that is how tests reach a real MySQL-protocol
// server behind the simulator. Every call is bounded by its context and by
// DefaultTimeout per dial, read and write.
package tidbsql

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/net/proxy"
)

// DefaultPort is TiDB's MySQL port when spec.tidb.service.port is unset.
const DefaultPort = 4000

// DefaultTimeout bounds one dial, and each read and write of a connection.
const DefaultTimeout = 10 * time.Second

// RootUser is TiDB's superuser; a new cluster has 'root'@'%' with an empty
// password.
const RootUser = "root"

// ErrAccessDenied is returned (wrapped) when the server refuses the login
// (MySQL error 1045): the password is wrong.
var ErrAccessDenied = errors.New("access denied")

// mysqlAccessDenied is ER_ACCESS_DENIED_ERROR.
const mysqlAccessDenied = 1045

// ServiceAddr returns the address of TidbCluster tcName's TiDB client Service
// in namespace: `<tc>-tidb.<ns>.svc:<port>`, port DefaultPort when port is 0.
func ServiceAddr(namespace, tcName string, port int32) string {
	if port == 0 {
		port = DefaultPort
	}
	return net.JoinHostPort(tcName+"-tidb."+namespace+".svc", strconv.Itoa(int(port)))
}

// Target is where and how to connect: Addr (host:port), and TLS (nil for a
// plain connection; see TLSConfigFromSecretData).
type Target struct {
	Addr string
	TLS  *tls.Config
}

// Open returns a pool of connections to t as user with password, checked by
// one ping within ctx. The pool interpolates parameters on the client (so
// `?` works in statements such as ALTER USER that the server cannot
// prepare) and allows several statements in one Exec (bootstrap and init
// SQL files). It errors with ErrAccessDenied when the login is refused, and
// with the dial or protocol error otherwise; no pool is left open then. The
// caller closes the pool.
func Open(ctx context.Context, t Target, user, password string) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = user
	cfg.Passwd = password
	cfg.Net = "tcp"
	cfg.Addr = t.Addr
	cfg.TLS = t.TLS
	cfg.Timeout = DefaultTimeout
	cfg.ReadTimeout = DefaultTimeout
	cfg.WriteTimeout = DefaultTimeout
	cfg.InterpolateParams = true
	cfg.MultiStatements = true
	cfg.AllowNativePasswords = true
	cfg.DialFunc = dialContext
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("tidb sql %s: %w", t.Addr, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	db.SetConnMaxLifetime(time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, classify(t.Addr, user, err)
	}
	return db, nil
}

// dialContext dials addr through the proxy the environment names
// (ALL_PROXY/NO_PROXY), or directly, within ctx and DefaultTimeout.
func dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	c, err := proxy.Dial(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return c, nil
}

// classify wraps a login error: access denied becomes ErrAccessDenied.
func classify(addr, user string, err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == mysqlAccessDenied {
		return fmt.Errorf("tidb sql %s: login as %s: %w (%s)", addr, user, ErrAccessDenied, me.Message)
	}
	return fmt.Errorf("tidb sql %s: login as %s: %w", addr, user, err)
}

// CheckPassword reports whether user logs in to t with password: nil when
// it does, an error wrapping ErrAccessDenied when the server refuses it, any
// other error when the server could not be asked.
func CheckPassword(ctx context.Context, t Target, user, password string) error {
	db, err := Open(ctx, t, user, password)
	if err != nil {
		return err
	}
	return db.Close()
}

// SetPassword sets the password of 'user'@'%' on the server db is connected
// to, as `ALTER USER ?@'%' IDENTIFIED BY ?` — the form TiDB, MySQL 5.7+ and
// MariaDB 10.2+ all accept (MariaDB reads `SET PASSWORD … = 'x'` as a hash,
// TiDB and MySQL 8 as the plain password). The password is interpolated and
// escaped by the driver and appears in no error. It errors when the
// statement fails (e.g. the user has no privilege or does not exist).
func SetPassword(ctx context.Context, db *sql.DB, user, password string) error {
	if _, err := db.ExecContext(ctx, "ALTER USER ?@'%' IDENTIFIED BY ?", user, password); err != nil {
		return fmt.Errorf("set the password of %s@%%: %w", user, redact(err, password))
	}
	return nil
}

// SetRootPassword logs in to t as root with current (empty for a new
// cluster) and sets root's password to password. It errors with
// ErrAccessDenied when current is not root's password, and with the dial or
// statement error otherwise.
func SetRootPassword(ctx context.Context, t Target, current, password string) error {
	db, err := Open(ctx, t, RootUser, current)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	return SetPassword(ctx, db, RootUser, password)
}

// redact keeps a server error's number but never echoes a statement back
// (servers quote the statement near a syntax error).
func redact(err error, secret string) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && secret != "" {
		return fmt.Errorf("error %d (statement not shown)", me.Number)
	}
	return err
}
