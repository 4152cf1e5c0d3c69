package initializer

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadUsersAsTheKubeletMountsASecret reads a directory laid out as the
// kubelet mounts a Secret: keys are links into a hidden timestamped
// directory through ..data; hidden entries are skipped and one trailing
// newline is dropped.
func TestReadUsersAsTheKubeletMountsASecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "..2026_11_24_09_00_00.123")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"root": "r00t\n", "app": "a\r\n", "blank": ""} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"root", "app", "blank"} {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	users, err := ReadUsers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Users{"root": "r00t", "app": "a", "blank": ""}, users); diff != "" {
		t.Errorf("users (-want +got):\n%s", diff)
	}
	if root, ok := users.Root(); !ok || root != "r00t" {
		t.Errorf("Root() = %q, %t", root, ok)
	}
	if got := users.Others(); !slices.Equal(got, []string{"app", "blank"}) {
		t.Errorf("Others() = %v, want [app blank]", got)
	}
}

func TestReadUsersErrors(t *testing.T) {
	t.Parallel()
	if users, err := ReadUsers(""); err != nil || len(users) != 0 {
		t.Errorf("no directory: %v, %v; want no users", users, err)
	}
	if _, err := ReadUsers(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("a missing directory is not an error")
	}
}

func TestReadSQLFileWinsOverInline(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "init-sql")
	if err := os.WriteFile(file, []byte("CREATE DATABASE a;"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, inline, want string }{
		{"", "CREATE DATABASE b;", "CREATE DATABASE b;"},
		{file, "CREATE DATABASE b;", "CREATE DATABASE a;"},
		{"", "", ""},
	} {
		got, err := ReadSQL(c.file, c.inline)
		if err != nil || got != c.want {
			t.Errorf("ReadSQL(%q, %q) = %q, %v; want %q", c.file, c.inline, got, err, c.want)
		}
	}
	if _, err := ReadSQL(file+"-absent", ""); err == nil {
		t.Error("a missing file is not an error")
	}
}

func TestReadTLSDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ReadTLSDir(dir); err == nil {
		t.Error("an empty directory is not an error")
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := ReadTLSDir(dir)
	if err != nil || string(data["ca.crt"]) != "pem" || len(data) != 1 {
		t.Errorf("ReadTLSDir = %v, %v; want only ca.crt", data, err)
	}
}

func TestIsAllWithGrantOption(t *testing.T) {
	t.Parallel()
	for grant, want := range map[string]bool{
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'10.0.0.%' WITH GRANT OPTION":                                 true,
		"GRANT ALL PRIVILEGES ON *.* TO `root`@`127.0.0.1` IDENTIFIED BY PASSWORD '*AB12' WITH GRANT OPTION": true,
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'%'":                                                          false,
		"GRANT ALL PRIVILEGES ON `app`.* TO 'root'@'%' WITH GRANT OPTION":                                    false,
		"GRANT USAGE ON *.* TO 'root'@'%'":                                                                   false,
	} {
		if got := isAllWithGrantOption(grant); got != want {
			t.Errorf("isAllWithGrantOption(%q) = %t, want %t", grant, got, want)
		}
	}
}
