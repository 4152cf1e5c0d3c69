package storage

import (
	"path/filepath"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestOpenGCSWithEmulatorReadsNoCredentials: with STORAGE_EMULATOR_HOST the
// GCS bucket opens although the credentials file is missing (nothing is
// dialled until a request); without it the missing file is an error.
func TestOpenGCSWithEmulatorReadsNoCredentials(t *testing.T) {
	loc, err := LocationOf(v1alpha1.StorageProvider{Gcs: &v1alpha1.GcsStorageProvider{Bucket: "b", Prefix: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
	t.Setenv(GCSEmulatorHostEnv, "")
	if b, err := Open(t.Context(), loc); err == nil {
		_ = b.Close()
		t.Fatal("Open without an emulator and with a missing credentials file succeeded")
	}
	t.Setenv(GCSEmulatorHostEnv, "127.0.0.1:1")
	b, err := Open(t.Context(), loc)
	if err != nil {
		t.Fatalf("Open with an emulator: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
}
