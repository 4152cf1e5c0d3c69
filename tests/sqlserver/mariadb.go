// Package sqlserver starts a private MariaDB server on loopback for tests
// that need a real MySQL-protocol server: Debian's mariadb-server
// (mariadb-install-db and /usr/sbin/mariadbd; `make tools` installs it), a fresh
// data directory per server, and the state a new TiDB cluster starts in —
// user 'root'@'%' with an empty password. Test support only.
package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Binaries looked up on PATH first, then in Debian's locations.
var (
	serverPaths  = []string{"mariadbd", "/usr/sbin/mariadbd"}
	installPaths = []string{"mariadb-install-db", "/usr/bin/mariadb-install-db"}
)

// startTimeout bounds install plus the wait for the server's socket.
const startTimeout = 2 * time.Minute

// Server is one running mariadbd. Addr is its TCP address on 127.0.0.1
// (what a TiDB Service stands for in the tests); Socket its Unix socket,
// where root@localhost (empty password) administers it whatever 'root'@'%'
// is set to.
type Server struct {
	Addr    string
	Socket  string
	dir     string
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the server exits; waitErr is then set
	waitErr error
}

// Start installs a fresh data directory in a new temporary directory, starts
// mariadbd on a free loopback port and waits until it answers, then leaves
// 'root'@'%' with an empty password and all privileges as the only TCP
// account. It errors when a binary is missing, the install or the server
// fails, or the server does not answer within two minutes; nothing is left
// running then. extraArgs are appended to mariadbd's command line (e.g.
// --ssl-ca/--ssl-cert/--ssl-key to serve TLS).
func Start(ctx context.Context, extraArgs ...string) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	server, err := lookPath(serverPaths)
	if err != nil {
		return nil, err
	}
	install, err := lookPath(installPaths)
	if err != nil {
		return nil, err
	}
	// A short base directory: a Unix socket path is limited to 107 bytes.
	dir, err := os.MkdirTemp("", "mariadb-")
	if err != nil {
		return nil, fmt.Errorf("mariadb temp dir: %w", err)
	}
	s := &Server{Socket: filepath.Join(dir, "mysqld.sock"), dir: dir, exited: make(chan struct{})}
	if err := s.start(ctx, install, server, extraArgs); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, install, server string, extraArgs []string) error {
	data := filepath.Join(s.dir, "data")
	// A private tmpdir: MariaDB names temporary tables by process ID, and one
	// left in the shared /tmp by a killed server breaks a later install
	// whose bootstrap server gets the same ID.
	tmp := filepath.Join(s.dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("mariadb tmpdir: %w", err)
	}
	out, err := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+data, "--tmpdir="+tmp,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--user=root").CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb-install-db: %w: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logFile := filepath.Join(s.dir, "error.log")
	args := append([]string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--socket=" + s.Socket,
		"--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1", "--user=root", "--skip-name-resolve",
		"--pid-file=" + filepath.Join(s.dir, "mysqld.pid"), "--log-error=" + logFile,
		"--innodb-buffer-pool-size=16M", "--skip-log-bin", "--max-connections=64"}, extraArgs...)
	s.cmd = exec.Command(server, args...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start mariadbd: %w", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		log, _ := os.ReadFile(logFile)
		return fmt.Errorf("%w; mariadbd log:\n%s", err, log)
	}
	return s.resetRoot(ctx)
}

// waitReady polls the socket until the server answers, it exits or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		db, err := s.Admin()
		if err == nil {
			err = db.PingContext(ctx)
			_ = db.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("mariadbd exited before it answered: %w", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("mariadbd did not answer on %s: %w (last: %w)", s.Socket, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// resetRoot makes the server look like a new TiDB: 'root'@'%' with an empty
// password, and no anonymous or host-specific root account (the installer
// makes root@127.0.0.1) that a TCP login could match instead.
func (s *Server) resetRoot(ctx context.Context) error {
	db, err := s.Admin()
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	for _, stmt := range []string{
		"DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host <> 'localhost')",
		"FLUSH PRIVILEGES",
		"CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY ''",
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION",
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("mariadb setup %q: %w", stmt, err)
		}
	}
	return nil
}

// Admin opens a pool as root@localhost over the Unix socket (empty
// password), unaffected by what the code under test does to 'root'@'%'.
// It errors only on a bad configuration; the first query dials.
func (s *Server) Admin() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "unix"
	cfg.Addr = s.Socket
	cfg.MultiStatements = true
	cfg.Timeout = 5 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mariadb admin connector: %w", err)
	}
	return sql.OpenDB(conn), nil
}

// Stop ends the server by its PID (SIGTERM, then SIGKILL after 30 s) and
// removes its directory. It is safe on a server that failed to start and
// errors only when the directory cannot be removed.
func (s *Server) Stop() error {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove mariadb dir: %w", err)
	}
	return nil
}

func lookPath(candidates []string) (string, error) {
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New(candidates[0] + " not found: install Debian's mariadb-server (`make tools` does)")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
