// Package storage is where backup data lives: the Location a Backup's or
// Restore's StorageProvider names (its URL, as BR and the CR's backupPath
// spell it), and one small Bucket interface over S3, GCS, Azure Blob and
// local volumes (gocloud.dev/blob underneath) to list objects with their
// sizes and delete them in batches.
package storage

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Kind is a storage provider.
type Kind string

// The storage providers.
const (
	KindS3    Kind = "s3"
	KindGCS   Kind = "gcs"
	KindAzure Kind = "azure"
	KindLocal Kind = "local"
)

// Location is one place backup data lives: a bucket (S3, GCS), container
// (Azure) or mount path (local) and a prefix inside it, with the provider
// whose options apply.
type Location struct {
	// Kind is the provider.
	Kind Kind
	// Bucket is the bucket or container; for local storage the mount path.
	Bucket string
	// Prefix inside the bucket, without leading or trailing slashes.
	Prefix string
	// Provider is the StorageProvider the location was read from.
	Provider v1alpha1.StorageProvider
}

// LocationOf reads the Location of sp. The deprecated `path` fields
// (s3://bucket/prefix) are used when bucket is empty. It errors when sp sets
// no provider or its bucket is empty.
func LocationOf(sp v1alpha1.StorageProvider) (Location, error) {
	loc := Location{Provider: sp}
	var err error
	switch {
	case sp.S3 != nil:
		loc.Kind = KindS3
		loc.Bucket, loc.Prefix, err = bucketAndPrefix(sp.S3.Bucket, sp.S3.Prefix, sp.S3.Path)
	case sp.Gcs != nil:
		loc.Kind = KindGCS
		loc.Bucket, loc.Prefix, err = bucketAndPrefix(sp.Gcs.Bucket, sp.Gcs.Prefix, sp.Gcs.Path)
	case sp.Azblob != nil:
		loc.Kind = KindAzure
		loc.Bucket, loc.Prefix, err = bucketAndPrefix(sp.Azblob.Container, sp.Azblob.Prefix, sp.Azblob.Path)
	case sp.Local != nil:
		loc.Kind = KindLocal
		loc.Bucket = path.Clean("/" + sp.Local.VolumeMount.MountPath)
		loc.Prefix = cleanPrefix(sp.Local.Prefix)
		if sp.Local.VolumeMount.MountPath == "" {
			err = fmt.Errorf("local storage has no volumeMount.mountPath")
		}
	default:
		err = fmt.Errorf("no storage provider is set: set one of s3, gcs, azblob or local")
	}
	if err != nil {
		return Location{}, err
	}
	return loc, nil
}

// bucketAndPrefix returns bucket and prefix, or reads both from the
// deprecated path (scheme://bucket/prefix or bucket/prefix) when bucket is
// empty.
func bucketAndPrefix(bucket, prefix, deprecatedPath string) (string, string, error) {
	if bucket == "" && deprecatedPath != "" {
		p := deprecatedPath
		if i := strings.Index(p, "://"); i >= 0 {
			p = p[i+3:]
		}
		bucket, prefix, _ = strings.Cut(strings.TrimLeft(p, "/"), "/")
	}
	if bucket == "" {
		return "", "", fmt.Errorf("the storage provider names no bucket (or container)")
	}
	return bucket, cleanPrefix(prefix), nil
}

// cleanPrefix trims the slashes around p and collapses repeated ones.
func cleanPrefix(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// URL is the location as BR's --storage and the CR's backupPath spell it:
// s3://bucket/prefix, gcs://bucket/prefix, azure://container/prefix,
// local:///mount/path/prefix.
func (l Location) URL() string {
	u := url.URL{Scheme: string(l.Kind), Host: l.Bucket, Path: "/" + l.Prefix}
	if l.Kind == KindLocal {
		u.Host, u.Path = "", path.Join(l.Bucket, l.Prefix)
	}
	if l.Prefix == "" && l.Kind != KindLocal {
		u.Path = ""
	}
	return u.String()
}

// Join returns the location of sub below l.
func (l Location) Join(sub string) Location {
	l.Prefix = cleanPrefix(l.Prefix + "/" + sub)
	return l
}

// ObjectPrefix is the prefix every object under l starts with: the prefix
// and a slash, so that a sibling prefix sharing its first letters
// ("backup-1" and "backup-10") is never included; empty for a whole bucket.
func (l Location) ObjectPrefix() string {
	if l.Prefix == "" {
		return ""
	}
	return l.Prefix + "/"
}
