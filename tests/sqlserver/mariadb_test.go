package sqlserver

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestStartFreshRoot: a started server takes a TCP login as root with an
// empty password (a new TiDB's state) and is gone after Stop.
func TestStartFreshRoot(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = "root", "tcp", s.Addr, 5*time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	var user string
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		t.Fatalf("TCP login as root with an empty password: %v", err)
	}
	if user != "root@%" {
		t.Errorf("TCP login matched %q, want root@%%", user)
	}
	_ = db.Close()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err == nil {
		t.Error("the server still answers after Stop")
	}
}
