package names

// Initializer returns "<tc>-tidb-initializer", the Job of a TidbInitializer
// of TidbCluster tc.
func Initializer(tc string) string { return Member(tc, TiDB) + "-initializer" }
