package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
)

// Object is one stored object: its full key and size in bytes.
type Object struct {
	Key  string
	Size int64
}

// Bucket is the storage a backup-manager needs: list objects under a prefix
// page by page with their sizes, and delete them. Close releases it.
type Bucket interface {
	// ListPage lists up to pageSize objects whose keys start with prefix,
	// from the page token (nil for the first page), and returns the next
	// token (nil after the last page). It errors when the provider does.
	ListPage(ctx context.Context, prefix string, token []byte, pageSize int) ([]Object, []byte, error)
	// DeleteBatch deletes keys, in one request where the provider has one
	// (S3's DeleteObjects) and one by one otherwise. A missing key is not an
	// error; it errors with every key that could not be deleted.
	DeleteBatch(ctx context.Context, keys []string) error
	// Delete deletes one object; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// Put writes one object (tests, the stand-in BR).
	Put(ctx context.Context, key string, data []byte) error
	// Close releases the bucket's clients.
	Close() error
}

// blobBucket is a Bucket over a gocloud.dev blob.Bucket.
type blobBucket struct {
	b *blob.Bucket
	// s3Bucket is the S3 bucket's name (gocloud does not expose it); empty
	// for the other providers.
	s3Bucket string
}

var _ Bucket = (*blobBucket)(nil)

// ListPage implements Bucket.
func (g *blobBucket) ListPage(ctx context.Context, prefix string, token []byte, pageSize int) ([]Object, []byte, error) {
	if token == nil {
		token = blob.FirstPageToken
	}
	objs, next, err := g.b.ListPage(ctx, token, pageSize, &blob.ListOptions{Prefix: prefix})
	if err != nil {
		return nil, nil, fmt.Errorf("listing objects under %q: %w", prefix, err)
	}
	out := make([]Object, 0, len(objs))
	for _, o := range objs {
		if !o.IsDir {
			out = append(out, Object{Key: o.Key, Size: o.Size})
		}
	}
	if len(next) == 0 {
		next = nil
	}
	return out, next, nil
}

// Delete implements Bucket.
func (g *blobBucket) Delete(ctx context.Context, key string) error {
	if err := g.b.Delete(ctx, key); err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting %q: %w", key, err)
	}
	return nil
}

// DeleteBatch implements Bucket: S3's DeleteObjects for keys S3 stores
// unescaped, one by one for the rest and the other providers.
func (g *blobBucket) DeleteBatch(ctx context.Context, keys []string) error {
	var client *s3.Client
	if g.s3Bucket != "" && g.b.As(&client) {
		var plain, escaped []string
		for _, k := range keys {
			if needsS3Escape(k) {
				escaped = append(escaped, k)
			} else {
				plain = append(plain, k)
			}
		}
		return errors.Join(deleteS3Objects(ctx, client, g.s3Bucket, plain), g.deleteEach(ctx, escaped))
	}
	return g.deleteEach(ctx, keys)
}

// deleteEach deletes keys one by one, joining the errors.
func (g *blobBucket) deleteEach(ctx context.Context, keys []string) error {
	var errs []error
	for _, k := range keys {
		errs = append(errs, g.Delete(ctx, k))
	}
	return errors.Join(errs...)
}

// Put implements Bucket.
func (g *blobBucket) Put(ctx context.Context, key string, data []byte) error {
	if err := g.b.WriteAll(ctx, key, data, nil); err != nil {
		return fmt.Errorf("writing %q: %w", key, err)
	}
	return nil
}

// Close implements Bucket.
func (g *blobBucket) Close() error {
	return g.b.Close()
}

// Read returns the content of one object (the stand-in BR reads its
// backupmeta back).
func Read(ctx context.Context, b Bucket, key string) ([]byte, error) {
	g, ok := b.(*blobBucket)
	if !ok {
		return nil, fmt.Errorf("reading %q: not a stored bucket", key)
	}
	r, err := g.b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", key, err)
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

// deleteS3Objects deletes keys with DeleteObjects, at most 1000 a request
// (S3's limit), and errors with the keys S3 reports it could not delete.
func deleteS3Objects(ctx context.Context, client *s3.Client, bucket string, keys []string) error {
	const maxPerRequest = 1000
	var errs []error
	for len(keys) > 0 {
		n := min(len(keys), maxPerRequest)
		ids := make([]s3types.ObjectIdentifier, 0, n)
		for _, k := range keys[:n] {
			ids = append(ids, s3types.ObjectIdentifier{Key: aws.String(k)})
		}
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting %d objects from bucket %q: %w", n, bucket, err))
		} else {
			for _, e := range out.Errors {
				errs = append(errs, fmt.Errorf("deleting %q from bucket %q: %s: %s",
					aws.ToString(e.Key), bucket, aws.ToString(e.Code), aws.ToString(e.Message)))
			}
		}
		keys = keys[n:]
	}
	return errors.Join(errs...)
}

// needsS3Escape reports whether gocloud's s3blob would store key escaped
// (control characters, "../"), so that a raw request must not name it.
func needsS3Escape(key string) bool {
	for _, c := range key {
		if c < 32 {
			return true
		}
	}
	return strings.Contains(key, "../")
}
