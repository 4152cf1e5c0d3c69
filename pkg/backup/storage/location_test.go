package storage

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestLocationOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		sp         v1alpha1.StorageProvider
		wantURL    string
		wantPrefix string
		wantObj    string
		wantErr    bool
	}{
		{name: "s3 bucket and prefix", sp: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Bucket: "b", Prefix: "/a//b/"}},
			wantURL: "s3://b/a/b", wantPrefix: "a/b", wantObj: "a/b/"},
		{name: "s3 deprecated path", sp: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Path: "s3://bk/x/y"}},
			wantURL: "s3://bk/x/y", wantPrefix: "x/y", wantObj: "x/y/"},
		{name: "s3 whole bucket", sp: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Bucket: "b"}},
			wantURL: "s3://b", wantObj: ""},
		{name: "gcs", sp: v1alpha1.StorageProvider{Gcs: &v1alpha1.GcsStorageProvider{Bucket: "g", Prefix: "p"}},
			wantURL: "gcs://g/p", wantPrefix: "p", wantObj: "p/"},
		{name: "azure", sp: v1alpha1.StorageProvider{Azblob: &v1alpha1.AzblobStorageProvider{Container: "c", Prefix: "p/q"}},
			wantURL: "azure://c/p/q", wantPrefix: "p/q", wantObj: "p/q/"},
		{name: "azure deprecated path", sp: v1alpha1.StorageProvider{Azblob: &v1alpha1.AzblobStorageProvider{Path: "azure://c/p"}},
			wantURL: "azure://c/p", wantPrefix: "p", wantObj: "p/"},
		{name: "local", sp: v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{Prefix: "backups/one",
			VolumeMount: corev1.VolumeMount{MountPath: "/nfs/"}}}, wantURL: "local:///nfs/backups/one", wantPrefix: "backups/one", wantObj: "backups/one/"},
		{name: "no provider", wantErr: true},
		{name: "s3 without bucket", sp: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Prefix: "p"}}, wantErr: true},
		{name: "local without mount", sp: v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{}}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loc, err := LocationOf(tc.sp)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if loc.URL() != tc.wantURL || loc.Prefix != tc.wantPrefix || loc.ObjectPrefix() != tc.wantObj {
				t.Errorf("URL %q prefix %q object prefix %q, want %q %q %q", loc.URL(), loc.Prefix, loc.ObjectPrefix(), tc.wantURL, tc.wantPrefix, tc.wantObj)
			}
		})
	}
}

func TestJoinAndPathStyle(t *testing.T) {
	t.Parallel()
	loc, err := LocationOf(v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Bucket: "b", Prefix: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Join("/c/").URL(); got != "s3://b/a/c" {
		t.Errorf("Join = %q", got)
	}
	cases := []struct {
		p    v1alpha1.S3StorageProvider
		want bool
	}{
		{v1alpha1.S3StorageProvider{}, false},
		{v1alpha1.S3StorageProvider{Endpoint: "http://minio:9000"}, true},
		{v1alpha1.S3StorageProvider{Endpoint: "http://minio:9000", ForcePathStyle: ptr.To(false)}, false},
		{v1alpha1.S3StorageProvider{ForcePathStyle: ptr.To(true)}, true},
	}
	for _, c := range cases {
		if got := S3PathStyle(&c.p); got != c.want {
			t.Errorf("S3PathStyle(%+v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestLocalBucketListsSizesAndDeletes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	loc, err := LocationOf(v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{Prefix: "p",
		VolumeMount: corev1.VolumeMount{MountPath: t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	for _, k := range []string{"p/a", "p/sub/b", "p2/c"} {
		if err := b.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	objs, next, err := b.ListPage(ctx, loc.ObjectPrefix(), nil, 10)
	if err != nil || next != nil {
		t.Fatalf("ListPage: %v, next %v", err, next)
	}
	if len(objs) != 2 || objs[0] != (Object{Key: "p/a", Size: 3}) || objs[1] != (Object{Key: "p/sub/b", Size: 7}) {
		t.Errorf("listed %+v", objs)
	}
	if err := b.DeleteBatch(ctx, []string{"p/a", "p/sub/b", "p/missing"}); err != nil {
		t.Fatalf("DeleteBatch: %v", err)
	}
	objs, _, _ = b.ListPage(ctx, "p", nil, 10)
	if len(objs) != 1 || objs[0].Key != "p2/c" {
		t.Errorf("after delete: %+v", objs)
	}
	if data, err := Read(ctx, b, "p2/c"); err != nil || string(data) != "p2/c" {
		t.Errorf("Read = %q, %v", data, err)
	}
	if !needsS3Escape("a/../b") || !needsS3Escape("a\nb") || needsS3Escape("a/b-1_2.sst") {
		t.Error("needsS3Escape misjudges keys")
	}
}
