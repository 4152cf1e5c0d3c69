package initializer

import "strings"

// isAllWithGrantOption reports whether one row of SHOW GRANTS grants every
// privilege on every database with grant option, as TiDB (`GRANT ALL
// PRIVILEGES ON *.* TO 'root'@'h' WITH GRANT OPTION`) and MariaDB (the same
// with backquotes and the password hash) spell it.
func isAllWithGrantOption(grant string) bool {
	g := strings.ToUpper(grant)
	return strings.HasPrefix(g, "GRANT ALL PRIVILEGES ON *.* TO ") && strings.HasSuffix(strings.TrimSpace(g), "WITH GRANT OPTION")
}
