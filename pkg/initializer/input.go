package initializer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
)

// Users are the accounts of passwordSecret: user name → password.
type Users map[string]string

// Root returns root's password from the Secret and whether the Secret names
// root at all.
func (u Users) Root() (string, bool) {
	p, ok := u[tidbsql.RootUser]
	return p, ok
}

// Others returns the user names other than root, sorted, so that every run
// creates them in the same order.
func (u Users) Others() []string {
	out := make([]string, 0, len(u))
	for name := range u {
		if name != tidbsql.RootUser {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// ReadUsers reads a Secret mounted as a volume at dir: each file is a key
// (the user name) holding the password. Hidden entries (the kubelet's
// `..data` links and timestamped directories) and directories are skipped;
// one trailing newline is dropped from a password, as a Secret made from a
// file usually ends with one. An empty dir argument means no Secret (no
// users). It errors when the directory or a key cannot be read.
func ReadUsers(dir string) (Users, error) {
	users := Users{}
	if dir == "" {
		return users, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("password Secret directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		info, err := os.Stat(path) // follows the kubelet's symlinks
		if err != nil {
			return nil, fmt.Errorf("password Secret key %s: %w", name, err)
		}
		if info.IsDir() {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("password Secret key %s: %w", name, err)
		}
		p := strings.TrimSuffix(string(b), "\n")
		users[name] = strings.TrimSuffix(p, "\r")
	}
	return users, nil
}

// ReadSQL returns the init SQL: the content of file when file is set (the
// key init-sql of initSqlConfigMap, which wins over initSql), else inline
// (initSql). It errors when file cannot be read.
func ReadSQL(file, inline string) (string, error) {
	if file == "" {
		return inline, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("init SQL file: %w", err)
	}
	return string(b), nil
}

// ReadTLSDir reads a client certificate Secret mounted at dir (ca.crt,
// tls.crt, tls.key) into the data map tidbsql.TLSConfigFromSecretData
// takes; missing keys are left out. It errors when dir cannot be read.
func ReadTLSDir(dir string) (map[string][]byte, error) {
	data := map[string][]byte{}
	for _, key := range []string{tidbsql.SecretCAKey, tidbsql.SecretCertKey, tidbsql.SecretKeyKey} {
		b, err := os.ReadFile(filepath.Join(dir, key))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("TLS client Secret key %s: %w", key, err)
		}
		data[key] = b
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("TLS client Secret directory %s holds none of %s, %s, %s", dir,
			tidbsql.SecretCAKey, tidbsql.SecretCertKey, tidbsql.SecretKeyKey)
	}
	return data, nil
}
