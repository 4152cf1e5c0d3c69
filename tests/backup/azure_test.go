//go:build integration

package backup

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// Azurite's well-known development account (public, documented with the emulator).
const (
	azAccount   = "devstoreaccount1"
	azKey       = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	azContainer = "backups"
)

var (
	azuriteOnce sync.Once
	azuritePath string
	azuriteErr  error
)

// azuriteBinary installs Azurite with hack/s3-server.sh build-azurite (npm,
// about a minute, once) and returns azurite-blob's path.
func azuriteBinary(t *testing.T) string {
	t.Helper()
	azuriteOnce.Do(func() {
		cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "s3-server.sh"), "build-azurite")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if azuriteErr = cmd.Run(); azuriteErr != nil {
			azuriteErr = fmt.Errorf("%w\n%s", azuriteErr, stderr.String())
		}
		azuritePath = strings.TrimSpace(out.String())
	})
	if azuriteErr != nil {
		t.Fatalf("installing Azurite with hack/s3-server.sh build-azurite: %v", azuriteErr)
	}
	return azuritePath
}

// startAzurite starts Azurite's blob service on a free 127.0.0.1 port with a
// private data directory, creates the container and returns the env that
// points the Azure clients (gocloud's and the stand-in br's) at it.
func startAzurite(t *testing.T, ctx context.Context) []string {
	t.Helper()
	bin := azuriteBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	_ = ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--blobHost", "127.0.0.1", "--blobPort", fmt.Sprint(addr.Port),
		"--location", t.TempDir(), "--skipApiVersionCheck", "--loose")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Azurite: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("Azurite output:\n%s", logs.String())
		}
	})
	cred, err := container.NewSharedKeyCredential(azAccount, azKey)
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s/%s/%s", addr, azAccount, azContainer)
	client, err := container.NewClientWithSharedKeyCredential(url, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, ctx, 30*time.Second, "Azurite creates container "+azContainer, func(ctx context.Context) (bool, error) {
		_, err := client.Create(ctx, nil)
		return err == nil, nil
	})
	return []string{"AZURE_STORAGE_ACCOUNT=" + azAccount, "AZURE_STORAGE_KEY=" + azKey,
		"AZURE_STORAGE_DOMAIN=" + addr.String(), "AZURE_STORAGE_PROTOCOL=http", "AZURE_STORAGE_IS_LOCAL_EMULATOR=true"}
}

// TestBackupToAzureCompletesAndCleans backs up to Azure Blob (Azurite,
// Azure's emulator) and cleans: the size is summed from the container,
// the path is azure://<container>/<prefix>, and clean leaves a sibling
// prefix alone.
func TestBackupToAzureCompletesAndCleans(t *testing.T) {
	f := newFixture(t)
	ctx := f.env.Ctx
	azEnv := startAzurite(t, ctx)
	for _, kv := range azEnv {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	sp := v1alpha1.StorageProvider{Azblob: &v1alpha1.AzblobStorageProvider{Container: azContainer, Prefix: "cluster-a/az-1", AccessTier: "Cool"}}
	sibling, err := storage.LocationOf(v1alpha1.StorageProvider{Azblob: &v1alpha1.AzblobStorageProvider{Container: azContainer, Prefix: "cluster-a/az-10"}})
	if err != nil {
		t.Fatal(err)
	}
	putLocal(t, sibling, "keep.sst")
	f.createBackup(t, "az-1", sp, func(b *v1alpha1.Backup) { b.Spec.CleanOption = &v1alpha1.CleanOption{PageSize: 2} })

	if code, out := f.runManager(t, azEnv, "backup", "--namespace="+f.env.Namespace, "--backupName=az-1"); code != 0 {
		t.Fatalf("backup exited %d:\n%s", code, out)
	}
	b := f.backup(t, "az-1")
	if !condition.IsBackupComplete(b) || b.Status.BackupPath != "azure://backups/cluster-a/az-1" ||
		b.Status.BackupSize != dataSize(3)+metaSize || b.Status.CommitTs != defaultTS {
		t.Fatalf("status = %+v", b.Status)
	}
	loc, _ := storage.LocationOf(sp)
	if objs := objectsUnder(t, ctx, loc); len(objs) != 4 || objs["cluster-a/az-1/backupmeta"] != metaSize {
		t.Errorf("container holds %v, want 3 data files and the backupmeta", objs)
	}
	if args := f.brArgs(t)[0]; !strings.Contains(args, "--storage=azure://backups/cluster-a/az-1 --azblob.access-tier=Cool") {
		t.Errorf("br args = %q", args)
	}
	if code, out := f.runManager(t, azEnv, "clean", "--namespace="+f.env.Namespace, "--backupName=az-1"); code != 0 {
		t.Fatalf("clean exited %d:\n%s", code, out)
	}
	if left := objectsUnder(t, ctx, loc); len(left) != 0 {
		t.Errorf("clean left %v", left)
	}
	if kept := objectsUnder(t, ctx, sibling); len(kept) != 1 {
		t.Errorf("clean touched the sibling prefix: %v", kept)
	}
	if !condition.IsBackupClean(f.backup(t, "az-1")) {
		t.Error("Clean not recorded")
	}
}
