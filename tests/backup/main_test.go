//go:build integration

// Package backup tests the backup-manager end to end: the real binary, run
// with a backup Job's exact arguments against the test cluster's API server,
// a real S3 server (versitygw, built by hack/s3-server.sh) and a stand-in
// BR (./standinbr) on PATH that writes what BR writes.
package backup

import (
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
