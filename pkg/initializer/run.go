// Package initializer is the program the TidbInitializer Job runs
// (`/backup-manager tidb-initializer`, docs/user-guide.md): it logs in to a
// TidbCluster's TiDB as root, creates the users of passwordSecret, runs the
// init SQL, sets root's password and restricts root to permitHost.
//
// A run is idempotent, and root's password is its record: the users and
// the init SQL are applied only while root still logs in with the empty
// password of a new cluster, and root's password is set after them, so a
// run that finished (or got that far) is never repeated by the next one,
// which logs in with passwordSecret's password and only completes the
// permitHost step. Without a root password in passwordSecret there is no
// record, and every run applies the init SQL again. Passwords are never
// written to the log or to an error.
package initializer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
)

// AnyHost is MySQL's host wildcard: root@'%' is a new cluster's root.
const AnyHost = "%"

// Options is what one run does.
type Options struct {
	// Target is TiDB's MySQL address and TLS.
	Target tidbsql.Target
	// Users are passwordSecret's accounts; root's entry is root's new password.
	Users Users
	// InitSQL is run once, as one multi-statement request; "" for none.
	InitSQL string
	// PermitHost is the only host root may connect from afterwards; "" or
	// AnyHost leaves root@'%'.
	PermitHost string
	// Wait is how long the first login is retried while TiDB does not
	// answer (a refused password is never retried); RetryInterval the pause
	// between tries.
	Wait          time.Duration
	RetryInterval time.Duration
	// Log receives one line per step (never a password).
	Log io.Writer
}

// Run initializes the cluster as o says, in order: log in as root (the
// empty password, then passwordSecret's root password); on a cluster whose
// root still has the empty password, create the other users, run the init
// SQL and set root's password; then, with permitHost, make sure
// root@permitHost exists with every privilege and drop root@'%'. It errors
// when root refuses both passwords, TiDB does not answer within o.Wait, or
// a statement fails; the error says which step.
func Run(ctx context.Context, o Options) error {
	db, fresh, err := login(ctx, o)
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	rootPassword, _ := o.Users.Root()
	if fresh {
		if err := createUsers(ctx, db, o); err != nil {
			return err
		}
		if err := runInitSQL(ctx, db, o); err != nil {
			return err
		}
		if rootPassword != "" {
			if err := tidbsql.SetPassword(ctx, db, tidbsql.RootUser, rootPassword); err != nil {
				return err
			}
			logf(o, "root's password set from passwordSecret")
		}
	} else {
		logf(o, "root already has passwordSecret's password: users and init SQL were applied by an earlier run")
	}
	if o.PermitHost != "" && o.PermitHost != AnyHost {
		if err := restrictRoot(ctx, db, o, rootPassword); err != nil {
			return err
		}
	}
	logf(o, "initialized")
	return nil
}

// login returns a pool logged in as root and whether root had the empty
// password (a cluster not initialized yet). Unanswered logins are retried
// until o.Wait has passed.
func login(ctx context.Context, o Options) (*sql.DB, bool, error) {
	deadline := time.Now().Add(o.Wait)
	for {
		db, fresh, err := tryLogin(ctx, o)
		if err == nil {
			return db, fresh, nil
		}
		if errors.Is(err, tidbsql.ErrAccessDenied) || !time.Now().Before(deadline) {
			return nil, false, err
		}
		logf(o, "TiDB at %s does not answer yet (%v); retrying", o.Target.Addr, err)
		select {
		case <-ctx.Done():
			return nil, false, fmt.Errorf("waiting for TiDB at %s: %w", o.Target.Addr, ctx.Err())
		case <-time.After(o.RetryInterval):
		}
	}
}

// tryLogin logs in once with the empty password, then with passwordSecret's
// root password when that is refused.
func tryLogin(ctx context.Context, o Options) (*sql.DB, bool, error) {
	db, err := tidbsql.Open(ctx, o.Target, tidbsql.RootUser, "")
	if err == nil {
		logf(o, "logged in to %s as root with the empty password: a new cluster", o.Target.Addr)
		return db, true, nil
	}
	rootPassword, _ := o.Users.Root()
	if !errors.Is(err, tidbsql.ErrAccessDenied) || rootPassword == "" {
		return nil, false, err
	}
	db, err = tidbsql.Open(ctx, o.Target, tidbsql.RootUser, rootPassword)
	if errors.Is(err, tidbsql.ErrAccessDenied) {
		return nil, false, fmt.Errorf("root refuses both the empty password and passwordSecret's root password "+
			"(changed outside this initializer, or this host is not within permitHost): %w", err)
	}
	if err != nil {
		return nil, false, err
	}
	logf(o, "logged in to %s as root with passwordSecret's password", o.Target.Addr)
	return db, false, nil
}

// createUsers creates each user of passwordSecret but root as user@'%' with
// its password, unless it exists. They get no privileges: the Secret holds
// only names and passwords, so what each may do is the init SQL's to grant.
func createUsers(ctx context.Context, db *sql.DB, o Options) error {
	for _, user := range o.Users.Others() {
		err := execSecret(ctx, db, o.Users[user], "CREATE USER IF NOT EXISTS ?@'%' IDENTIFIED BY ?", user, o.Users[user])
		if err != nil {
			return fmt.Errorf("create user %s@'%%': %w", user, err)
		}
		logf(o, "user %s@'%%' created (or already there)", user)
	}
	return nil
}

// runInitSQL runs the init SQL as one multi-statement request.
func runInitSQL(ctx context.Context, db *sql.DB, o Options) error {
	if o.InitSQL == "" {
		return nil
	}
	if _, err := db.ExecContext(ctx, o.InitSQL); err != nil {
		return fmt.Errorf("init SQL: %w", err)
	}
	logf(o, "init SQL run (%d bytes)", len(o.InitSQL))
	return nil
}

// restrictRoot makes root@permitHost (root's password, every privilege with
// grant option) when it is missing, checks that it has those privileges and
// that root's password logs in, and only then drops root@'%'.
func restrictRoot(ctx context.Context, db *sql.DB, o Options, rootPassword string) error {
	host := o.PermitHost
	exists, err := accountExists(ctx, db, host)
	if err != nil {
		return err
	}
	if !exists {
		if err := execSecret(ctx, db, rootPassword, "CREATE USER IF NOT EXISTS 'root'@? IDENTIFIED BY ?", host, rootPassword); err != nil {
			return fmt.Errorf("create root@'%s': %w", host, err)
		}
		if _, err := db.ExecContext(ctx, "GRANT ALL PRIVILEGES ON *.* TO 'root'@? WITH GRANT OPTION", host); err != nil {
			return fmt.Errorf("grant root@'%s' every privilege: %w", host, err)
		}
		logf(o, "root@'%s' created with every privilege", host)
	}
	if err := checkRootAt(ctx, db, o, host, rootPassword); err != nil {
		return err
	}
	anyHost, err := accountExists(ctx, db, AnyHost)
	if err != nil || !anyHost {
		return err
	}
	if _, err := db.ExecContext(ctx, "DROP USER IF EXISTS 'root'@'%'"); err != nil {
		return fmt.Errorf("drop root@'%%': %w", err)
	}
	logf(o, "root@'%%' dropped: root may connect from %s only", host)
	return nil
}

// checkRootAt verifies root@host before root@'%' goes: it holds every
// privilege with grant option, and root's password logs in.
func checkRootAt(ctx context.Context, db *sql.DB, o Options, host, rootPassword string) error {
	ok, err := hasAllPrivileges(ctx, db, host)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("root@'%s' lacks ALL PRIVILEGES ON *.* WITH GRANT OPTION; root@'%%' is kept", host)
	}
	if err := tidbsql.CheckPassword(ctx, o.Target, tidbsql.RootUser, rootPassword); err != nil {
		return fmt.Errorf("root's password does not log in; root@'%%' is kept: %w", err)
	}
	return nil
}

// accountExists reports whether root@host exists.
func accountExists(ctx context.Context, db *sql.DB, host string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.user WHERE User = 'root' AND Host = ?", host).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look up root@'%s': %w", host, err)
	}
	return n > 0, nil
}

// hasAllPrivileges reports whether SHOW GRANTS lists every privilege on
// *.* with grant option for root@host. The rows are matched, never logged
// (MariaDB's carry the password hash).
func hasAllPrivileges(ctx context.Context, db *sql.DB, host string) (bool, error) {
	rows, err := db.QueryContext(ctx, "SHOW GRANTS FOR 'root'@?", host)
	if err != nil {
		return false, fmt.Errorf("show grants for root@'%s': %w", host, err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var grant string
		if err := rows.Scan(&grant); err != nil {
			return false, fmt.Errorf("show grants for root@'%s': %w", host, err)
		}
		if isAllWithGrantOption(grant) {
			return true, nil
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("show grants for root@'%s': %w", host, err)
	}
	return false, nil
}

// execSecret runs a statement that carries secret; a server error keeps its
// number but not its message, which may quote the statement.
func execSecret(ctx context.Context, db *sql.DB, secret, query string, args ...any) error {
	_, err := db.ExecContext(ctx, query, args...)
	var me *mysql.MySQLError
	if err != nil && secret != "" && errors.As(err, &me) {
		return fmt.Errorf("error %d (statement not shown)", me.Number)
	}
	return err
}

func logf(o Options, format string, args ...any) {
	if o.Log != nil {
		_, _ = fmt.Fprintf(o.Log, format+"\n", args...)
	}
}
