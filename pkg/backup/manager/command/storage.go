// Package command builds the command lines the backup-manager runs: BR for
// snapshot and log backups and restores, dumpling for exports and
// TiDB Lightning for imports, with the storage options the TiDB Operator
// passes. Every builder is pure.
package command

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// ClusterTLSDir is where the Job mounts the cluster client certificate
// (--cluster-tls); ClientTLSDir is TiDB's client certificate (--client-tls).
const (
	ClusterTLSDir = "/var/lib/cluster-client-tls"
	ClientTLSDir  = "/var/lib/tidb-client-tls"
)

// StorageURL is loc's URL as BR's --storage takes it: the backupPath, plus
// `?force-path-style=` when spec.s3.forcePathStyle is set (BR's only way to
// say it).
func StorageURL(loc storage.Location) string {
	u := loc.URL()
	if loc.Kind == storage.KindS3 && loc.Provider.S3.ForcePathStyle != nil {
		u += "?force-path-style=" + strconv.FormatBool(*loc.Provider.S3.ForcePathStyle)
	}
	return u
}

// StorageFlags are the provider options of loc as BR and dumpling flags:
// --s3.region, --s3.endpoint, --s3.provider, --s3.acl, --s3.storage-class,
// --s3.sse; --gcs.storage-class, --gcs.predefined-acl; --azblob.account-name,
// --azblob.access-tier, --azblob.sas-token. Only set fields give flags;
// local storage has none.
func StorageFlags(loc storage.Location) []string {
	var out []string
	add := func(name, value string) {
		if value != "" {
			out = append(out, fmt.Sprintf("--%s=%s", name, value))
		}
	}
	switch p := loc.Provider; loc.Kind {
	case storage.KindS3:
		add("s3.region", p.S3.Region)
		add("s3.endpoint", p.S3.Endpoint)
		add("s3.provider", p.S3.Provider)
		add("s3.acl", p.S3.Acl)
		add("s3.storage-class", p.S3.StorageClass)
		add("s3.sse", p.S3.SSE)
	case storage.KindGCS:
		add("gcs.storage-class", p.Gcs.StorageClass)
		add("gcs.predefined-acl", p.Gcs.ObjectAcl)
	case storage.KindAzure:
		add("azblob.account-name", p.Azblob.StorageAccount)
		add("azblob.access-tier", p.Azblob.AccessTier)
		add("azblob.sas-token", p.Azblob.SasToken)
	}
	return out
}

// StorageURLWithOptions is loc's URL with its provider options as URL query
// parameters (endpoint, region, provider, force-path-style, acl,
// storage-class, sse; storage-class and predefined-acl for GCS; account-name
// and access-tier for Azure), for TiDB Lightning's -d, which takes no
// storage flags.
func StorageURLWithOptions(loc storage.Location) string {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	switch p := loc.Provider; loc.Kind {
	case storage.KindS3:
		set("endpoint", p.S3.Endpoint)
		set("region", p.S3.Region)
		set("provider", p.S3.Provider)
		set("acl", p.S3.Acl)
		set("storage-class", p.S3.StorageClass)
		set("sse", p.S3.SSE)
		if p.S3.ForcePathStyle != nil {
			set("force-path-style", strconv.FormatBool(*p.S3.ForcePathStyle))
		}
	case storage.KindGCS:
		set("storage-class", p.Gcs.StorageClass)
		set("predefined-acl", p.Gcs.ObjectAcl)
	case storage.KindAzure:
		set("account-name", p.Azblob.StorageAccount)
		set("access-tier", p.Azblob.AccessTier)
	}
	if len(q) == 0 {
		return loc.URL()
	}
	return loc.URL() + "?" + q.Encode()
}

// clusterTLSFlags are BR's TLS flags for a cluster with tlsCluster.
func clusterTLSFlags() []string {
	return []string{
		"--ca=" + ClusterTLSDir + "/ca.crt",
		"--cert=" + ClusterTLSDir + "/tls.crt",
		"--key=" + ClusterTLSDir + "/tls.key",
	}
}
