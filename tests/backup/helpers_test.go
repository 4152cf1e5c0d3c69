//go:build integration

package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// The S3 server's root credentials, handed to the backup-manager as a Job's
// Secret env would be.
const (
	accessKey = "kubetidb-test-access"
	secretKey = "kubetidb-test-secret-key"
	bucket    = "backups"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// binaries builds the backup-manager and the stand-in br (as `br`, and
// linked as `dumpling`, `tidb-lightning` and `tikv-ctl`) into one directory, and versitygw with hack/s3-server.sh (cached; minutes on a cold
// cache, once). It returns the directory and versitygw's path.
func binaries(t *testing.T) (string, string) {
	t.Helper()
	var gw string
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "kubetidb-backup-bins-")
		if binErr != nil {
			return
		}
		for _, b := range []struct{ out, pkg string }{
			{"backup-manager", "./cmd/backup-manager"},
			{"br", "./tests/backup/standinbr"},
		} {
			if binErr = goBuild(filepath.Join(binDir, b.out), b.pkg); binErr != nil {
				return
			}
		}
		t.Log("hack/s3-server.sh build: versitygw from the cache, or built (minutes, once)")
		for _, alias := range []string{"dumpling", "tidb-lightning", "tikv-ctl"} {
			if binErr = os.Symlink("br", filepath.Join(binDir, alias)); binErr != nil {
				return
			}
		}
		cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "s3-server.sh"), "build")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			binErr = fmt.Errorf("hack/s3-server.sh build: %w\n%s", err, stderr.String())
			return
		}
		if err := os.Symlink(strings.TrimSpace(out.String()), filepath.Join(binDir, "versitygw")); err != nil {
			binErr = err
		}
	})
	if binErr != nil {
		t.Fatalf("building the test binaries: %v", binErr)
	}
	gw = filepath.Join(binDir, "versitygw")
	return binDir, gw
}

// goBuild builds pkg (with the integration tag) into out.
func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-tags", "integration", "-o", out, pkg)
	cmd.Dir = framework.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// s3Server is one running versitygw with a POSIX root directory.
type s3Server struct {
	endpoint string
	client   *s3.Client
	addr     string // host:port, kept across stop and start
	root     string
	cmd      *exec.Cmd
	logs     *bytes.Buffer
}

// startS3 starts versitygw on a free 127.0.0.1 port with a private root,
// waits until it answers, creates the bucket and stops it at cleanup.
func startS3(t *testing.T, ctx context.Context) *s3Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	srv := &s3Server{endpoint: "http://" + addr, addr: addr, root: t.TempDir(), logs: &bytes.Buffer{}}
	srv.client = s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.endpoint),
		UsePathStyle: true,
		Credentials:  aws.NewCredentialsCache(credentialsProvider{}),
	})
	srv.start(t)
	t.Cleanup(func() {
		srv.stop()
		if t.Failed() {
			t.Logf("versitygw output:\n%s", srv.logs.String())
		}
	})
	framework.WaitFor(t, ctx, 30*time.Second, "versitygw creates bucket "+bucket, func(ctx context.Context) (bool, error) {
		_, err := srv.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
		return err == nil, nil
	})
	return srv
}

// start runs versitygw on s's address and root (again, after stop).
func (s *s3Server) start(t *testing.T) {
	t.Helper()
	_, gw := binaries(t)
	cmd := exec.Command(gw, "--port", s.addr, "--access", accessKey, "--secret", secretKey, "posix", s.root)
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	s.cmd = cmd
}

// stop kills the versitygw process s started (by its PID) and waits for it;
// a stopped server is left alone.
func (s *s3Server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// credentialsProvider hands out the server's root credentials.
type credentialsProvider struct{}

// Retrieve implements aws.CredentialsProvider.
func (credentialsProvider) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}, nil
}

// put writes one object into the bucket.
func (s *s3Server) put(t *testing.T, ctx context.Context, key string, size int) {
	t.Helper()
	if _, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: bytes.NewReader(make([]byte, size))}); err != nil {
		t.Fatalf("putting %s: %v", key, err)
	}
}

// list returns every key under prefix with its size, read straight from S3.
func (s *s3Server) list(t *testing.T, ctx context.Context, prefix string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("listing %q: %v", prefix, err)
		}
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToInt64(o.Size)
		}
	}
	return out
}

// s3Provider is the spec.s3 of a backup under prefix on srv.
func (s *s3Server) provider(prefix string) v1alpha1.StorageProvider {
	return v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
		Provider: "minio", Bucket: bucket, Prefix: prefix, Endpoint: s.endpoint,
		Region: "us-east-1", ForcePathStyle: ptr.To(true), SecretName: "s3-secret",
	}}
}

// fixture is one test's namespace, clients and binaries.
type fixture struct {
	env    *framework.Env
	client versioned.Interface
	bins   string
	args   string // the stand-in br's argument log
}

// newFixture installs the CRDs and creates the test's namespace.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	bins, _ := binaries(t)
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	client, err := versioned.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{env: env, client: client, bins: bins, args: filepath.Join(t.TempDir(), "br-args")}
}

// runManager runs the backup-manager binary with a Job's arguments (plus
// --kubeconfig), the stand-in br first on PATH and the S3 credentials in the
// environment, and returns its exit code and output.
func (f *fixture) runManager(t *testing.T, extraEnv []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.env.Ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(f.bins, "backup-manager"), append(args, "--kubeconfig="+framework.KubeconfigPath())...)
	cmd.Env = append(os.Environ(),
		"PATH="+f.bins+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AWS_ACCESS_KEY_ID="+accessKey, "AWS_SECRET_ACCESS_KEY="+secretKey,
		"NAMESPACE="+f.env.Namespace, "POD_NAME=test-job-pod", "STANDIN_BR_ARGS_FILE="+f.args)
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	}
	t.Fatalf("running backup-manager %v: %v\n%s", args, err, out)
	return -1, ""
}

// brArgs is the stand-in br's argument lines so far.
func (f *fixture) brArgs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(f.args)
	if err != nil {
		t.Fatalf("reading the stand-in br's arguments: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// createBackup creates a Backup named name with sp and spec.br for cluster basic.
func (f *fixture) createBackup(t *testing.T, name string, sp v1alpha1.StorageProvider, mutate func(*v1alpha1.Backup)) {
	t.Helper()
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.env.Namespace},
		Spec: v1alpha1.BackupSpec{StorageProvider: sp, BR: &v1alpha1.BRConfig{Cluster: "basic"}}}
	if mutate != nil {
		mutate(b)
	}
	if _, err := f.client.PingcapV1alpha1().Backups(f.env.Namespace).Create(f.env.Ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating backup %s: %v", name, err)
	}
}

// backup reads the Backup named name.
func (f *fixture) backup(t *testing.T, name string) *v1alpha1.Backup {
	t.Helper()
	b, err := f.client.PingcapV1alpha1().Backups(f.env.Namespace).Get(f.env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading backup %s: %v", name, err)
	}
	return b
}

// objectsUnder lists prefix in loc's bucket through the storage package
// (local storage).
func objectsUnder(t *testing.T, ctx context.Context, loc storage.Location) map[string]int64 {
	t.Helper()
	b, err := storage.Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	out := map[string]int64{}
	var token []byte
	for {
		objs, next, err := b.ListPage(ctx, loc.ObjectPrefix(), token, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			out[o.Key] = o.Size
		}
		if next == nil {
			return out
		}
		token = next
	}
}
