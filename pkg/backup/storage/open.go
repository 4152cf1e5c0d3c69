package storage

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob/azureblob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
	"gocloud.dev/gcp"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Open opens the bucket of loc with the credentials the Job's environment
// carries, as the TiDB Operator's backup-manager reads them: S3 from
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or the SDK's default chain,
// IAM), GCS from GOOGLE_APPLICATION_CREDENTIALS (or the default
// credentials; none with STORAGE_EMULATOR_HOST), Azure from AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY,
// AZURE_STORAGE_SAS_TOKEN or an Azure AD client (AZURE_CLIENT_ID,
// AZURE_CLIENT_SECRET, AZURE_TENANT_ID); local from the mounted volume. It
// errors when the client cannot be configured.
func Open(ctx context.Context, loc Location) (Bucket, error) {
	switch loc.Kind {
	case KindS3:
		return openS3(ctx, loc.Bucket, loc.Provider.S3)
	case KindGCS:
		return openGCS(ctx, loc.Bucket)
	case KindAzure:
		return openAzure(ctx, loc.Bucket, loc.Provider.Azblob)
	case KindLocal:
		b, err := fileblob.OpenBucket(loc.Bucket, &fileblob.Options{NoTempDir: true})
		if err != nil {
			return nil, fmt.Errorf("opening local storage %q: %w", loc.Bucket, err)
		}
		return &blobBucket{b: b}, nil
	}
	return nil, fmt.Errorf("unknown storage kind %q", loc.Kind)
}

// openS3 opens an S3 bucket at the provider's endpoint and region, path-style
// when forcePathStyle is set or, as BR does by default, for a custom endpoint.
func openS3(ctx context.Context, bucket string, p *v1alpha1.S3StorageProvider) (Bucket, error) {
	region := p.Region
	if region == "" {
		region = "us-east-1"
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region))
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if p.Endpoint != "" {
			o.BaseEndpoint = aws.String(p.Endpoint)
		}
		o.UsePathStyle = S3PathStyle(p)
	})
	b, err := s3blob.OpenBucket(ctx, client, bucket, nil)
	if err != nil {
		return nil, fmt.Errorf("opening S3 bucket %q: %w", bucket, err)
	}
	return &blobBucket{b: b, s3Bucket: bucket}, nil
}

// S3PathStyle reports whether requests to p address the bucket in the path:
// spec.s3.forcePathStyle when set, else true for a custom endpoint (BR's
// default), false for AWS.
func S3PathStyle(p *v1alpha1.S3StorageProvider) bool {
	if p.ForcePathStyle != nil {
		return *p.ForcePathStyle
	}
	return p.Endpoint != ""
}

// GCSEmulatorHostEnv names the env var that points GCS requests at a
// GCS-protocol server instead of Google (host:port or a URL, as the Google
// storage client reads it): requests then go unauthenticated and no
// credentials are read. The tests set it for fake-gcs-server.
const GCSEmulatorHostEnv = "STORAGE_EMULATOR_HOST"

// openGCS opens a GCS bucket with the default credentials
// (GOOGLE_APPLICATION_CREDENTIALS), or without any when
// STORAGE_EMULATOR_HOST names an emulator.
func openGCS(ctx context.Context, bucket string) (Bucket, error) {
	client := &gcp.HTTPClient{}
	if os.Getenv(GCSEmulatorHostEnv) == "" {
		creds, err := gcp.DefaultCredentials(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading GCS credentials: %w", err)
		}
		client, err = gcp.NewHTTPClient(gcp.DefaultTransport(), gcp.CredentialsTokenSource(creds))
		if err != nil {
			return nil, fmt.Errorf("creating the GCS client: %w", err)
		}
	}
	b, err := gcsblob.OpenBucket(ctx, client, bucket, nil)
	if err != nil {
		return nil, fmt.Errorf("opening GCS bucket %q: %w", bucket, err)
	}
	return &blobBucket{b: b}, nil
}

// openAzure opens an Azure Blob container with the account and credentials
// of the environment; spec.azblob.storageAccount wins over
// AZURE_STORAGE_ACCOUNT.
func openAzure(ctx context.Context, container string, p *v1alpha1.AzblobStorageProvider) (Bucket, error) {
	opts := azureblob.NewDefaultServiceURLOptions()
	if p.StorageAccount != "" {
		opts.AccountName = p.StorageAccount
	}
	if p.SasToken != "" {
		opts.SASToken = p.SasToken
	}
	if opts.AccountName == "" {
		return nil, fmt.Errorf("azure storage needs an account: set spec.azblob.storageAccount or AZURE_STORAGE_ACCOUNT")
	}
	serviceURL, err := azureblob.NewServiceURL(opts)
	if err != nil {
		return nil, fmt.Errorf("building the Azure service URL: %w", err)
	}
	client, err := azureblob.NewDefaultClient(serviceURL, azureblob.ContainerName(container))
	if err != nil {
		return nil, fmt.Errorf("creating the Azure client for container %q: %w", container, err)
	}
	b, err := azureblob.OpenBucket(ctx, client, nil)
	if err != nil {
		return nil, fmt.Errorf("opening Azure container %q: %w", container, err)
	}
	return &blobBucket{b: b}, nil
}

// isNotFound reports whether err says the object does not exist.
func isNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }
