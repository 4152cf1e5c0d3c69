package label

// TidbCluster annotations that gate or record a rollout (spec §6.2), with
// the TiDB Operator's keys and meaning.
const (
	// AnnPDCheckQuorumBeforeUpgrade: "true" makes each PD restart of a
	// rollout wait until PD would keep its quorum without the member.
	AnnPDCheckQuorumBeforeUpgrade = "tidb.pingcap.com/pd-check-quorum-before-upgrade"
	// AnnTiKVCheckAllStoresUpBeforeUpgrade: "true" makes each TiKV restart
	// of a rollout wait until every store PD lists is Up (or Tombstone).
	AnnTiKVCheckAllStoresUpBeforeUpgrade = "tidb.pingcap.com/tikv-check-all-stores-up-before-upgrade"
)

// TidbCluster annotations the operator writes while a TiDB version upgrade
// holds user DDL paused (TiDB's smooth upgrade), so that an operator
// restart still ends the pause: set once `/upgrade/start` succeeded,
// removed once `/upgrade/finish` did.
const (
	// AnnSmoothUpgradeDDLPaused is "true" while the pause is owed a finish.
	AnnSmoothUpgradeDDLPaused = "tidb.pingcap.com/smooth-upgrade-ddl-paused"
	// AnnSmoothUpgradeSourceVersion is the version the TiDB servers ran.
	AnnSmoothUpgradeSourceVersion = "tidb.pingcap.com/smooth-upgrade-source-version"
	// AnnSmoothUpgradeTargetVersion is the version they are upgraded to.
	AnnSmoothUpgradeTargetVersion = "tidb.pingcap.com/smooth-upgrade-target-version"
	// AnnSmoothUpgradeStartedAt is when the pause began (RFC 3339, UTC).
	AnnSmoothUpgradeStartedAt = "tidb.pingcap.com/smooth-upgrade-started-at"
)

// SmoothUpgradeAnnotations are the four smooth-upgrade keys.
var SmoothUpgradeAnnotations = []string{
	AnnSmoothUpgradeDDLPaused, AnnSmoothUpgradeSourceVersion, AnnSmoothUpgradeTargetVersion, AnnSmoothUpgradeStartedAt,
}
