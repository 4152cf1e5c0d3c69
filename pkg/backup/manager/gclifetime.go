package manager

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/manager/command"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
)

// DefaultTiKVGCLifeTime is what a backup or restore with spec.from (spec.to)
// raises TiDB's GC life time to while it runs when spec.tikvGCLifeTime is
// unset, as the TiDB Operator v1.6 does.
const DefaultTiKVGCLifeTime = "72h"

// Failure reasons of the GC life-time dance (the TiDB Operator's names).
const (
	ReasonConnectTiDB       = "ConnectTidbFailed"
	ReasonGetGCLifeTime     = "GetTikvGCLifeTimeFailed"
	ReasonParseOldGCLife    = "ParseOldTikvGCLifeTimeFailed"
	ReasonParseConfigGCLife = "ParseConfigTikvGCLifeTimeFailed"
	ReasonSetGCLifeTime     = "SetTikvGCLifeTimeFailed"
	ReasonResetGCLifeTime   = "ResetTikvGCLifeTimeFailed"
)

// The GC life time lives in TiDB's mysql.tidb table.
const (
	gcLifeTimeVariable = "tikv_gc_life_time"
	gcLifeTimeQuery    = "SELECT variable_value FROM mysql.tidb WHERE variable_name = ?"
	gcLifeTimeUpdate   = "UPDATE mysql.tidb SET variable_value = ? WHERE variable_name = ?"
)

// resetTimeout bounds the reset after the tool ran: shorter than a pod's
// default 30 s termination grace period, and independent of the run's
// context (which may be cancelled by then).
const resetTimeout = 25 * time.Second

// gcStepError is a failed step of the GC life-time dance with its reason.
type gcStepError struct {
	reason string
	err    error
}

func (e *gcStepError) Error() string { return e.reason + ": " + e.err.Error() }
func (e *gcStepError) Unwrap() error { return e.err }

// gcGuard is a raised GC life time to put back once the tool has run.
type gcGuard struct {
	db  *sql.DB
	old string // the value before; "" when nothing was raised
}

// raiseGCLifeTime logs in to access's TiDB and, when its tikv_gc_life_time
// is shorter than want (DefaultTiKVGCLifeTime when nil), sets it to want, as
// the TiDB Operator v1.6 does around a snapshot backup, an export and a BR
// restore. A nil access (no spec.from / spec.to) does nothing: the dance
// needs a login. The returned guard's reset puts the old value back. It
// errors (a *gcStepError naming the reason) when TiDB cannot be reached,
// either value is no Go duration, or the read or update fails.
func (m *Manager) raiseGCLifeTime(ctx context.Context, access *v1alpha1.TiDBAccessConfig, want *string) (*gcGuard, error) {
	if access == nil {
		if want != nil {
			m.logf("spec.tikvGCLifeTime %s is not set: no TiDB login (spec.from / spec.to) to set it with", *want)
		}
		return &gcGuard{}, nil
	}
	target := DefaultTiKVGCLifeTime
	if want != nil && *want != "" {
		target = *want
	}
	wantDur, err := time.ParseDuration(target)
	if err != nil {
		return nil, &gcStepError{ReasonParseConfigGCLife, err}
	}
	db, err := m.openTiDB(ctx, *access)
	if err != nil {
		return nil, &gcStepError{ReasonConnectTiDB, err}
	}
	g := &gcGuard{db: db}
	var old string
	if err := db.QueryRowContext(ctx, gcLifeTimeQuery, gcLifeTimeVariable).Scan(&old); err != nil {
		_ = db.Close()
		return nil, &gcStepError{ReasonGetGCLifeTime, err}
	}
	oldDur, err := time.ParseDuration(old)
	if err != nil {
		_ = db.Close()
		return nil, &gcStepError{ReasonParseOldGCLife, fmt.Errorf("%s %q: %w", gcLifeTimeVariable, old, err)}
	}
	m.logf("%s of %s is %s", gcLifeTimeVariable, access.Host, old)
	if oldDur >= wantDur {
		return g, nil
	}
	if _, err := db.ExecContext(ctx, gcLifeTimeUpdate, target, gcLifeTimeVariable); err != nil {
		_ = db.Close()
		return nil, &gcStepError{ReasonSetGCLifeTime, err}
	}
	m.logf("set %s of %s to %s", gcLifeTimeVariable, access.Host, target)
	g.old = old
	return g, nil
}

// reset puts the GC life time back when raiseGCLifeTime raised it, within
// its own resetTimeout, and closes the connection. It errors (a
// *gcStepError, reason ResetTikvGCLifeTimeFailed) when the update fails.
func (g *gcGuard) reset(m *Manager) error {
	if g == nil || g.db == nil {
		return nil
	}
	defer func() { _ = g.db.Close() }()
	if g.old == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	if _, err := g.db.ExecContext(ctx, gcLifeTimeUpdate, g.old, gcLifeTimeVariable); err != nil {
		return &gcStepError{ReasonResetGCLifeTime, err}
	}
	m.logf("reset %s to %s", gcLifeTimeVariable, g.old)
	return nil
}

// openTiDB logs in to access's TiDB (port 4000 and user root by default)
// with the password of its Secret, over TLS with the mounted TiDB client
// certificate when the Job passes --client-tls. It errors when the password
// or certificate cannot be read or the login fails.
func (m *Manager) openTiDB(ctx context.Context, access v1alpha1.TiDBAccessConfig) (*sql.DB, error) {
	login, err := m.login(ctx, access)
	if err != nil {
		return nil, err
	}
	port := access.Port
	if port == 0 {
		port = tidbsql.DefaultPort
	}
	user := access.User
	if user == "" {
		user = tidbsql.RootUser
	}
	target := tidbsql.Target{Addr: net.JoinHostPort(access.Host, strconv.Itoa(int(port)))}
	if m.Opts.ClientTLS {
		data := map[string][]byte{}
		for _, k := range []string{tidbsql.SecretCAKey, tidbsql.SecretCertKey, tidbsql.SecretKeyKey} {
			if b, err := os.ReadFile(filepath.Join(command.ClientTLSDir, k)); err == nil {
				data[k] = b
			}
		}
		if target.TLS, err = tidbsql.TLSConfigFromSecretData(data, m.Opts.SkipClientCA); err != nil {
			return nil, err
		}
	}
	return tidbsql.Open(ctx, target, user, login.Password)
}

// gcFailure splits a failed GC step into its reason and cause; any other
// error is fallback's.
func gcFailure(err error, fallback string) (string, error) {
	var e *gcStepError
	if errors.As(err, &e) {
		return e.reason, e.err
	}
	return fallback, err
}
