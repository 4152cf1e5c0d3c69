//go:build integration

// Command standinbr stands in for BR in the backup tests (BR needs TiKV), and
// for dumpling, TiDB Lightning and tikv-ctl (compact-log-backup, compact.go)
// when run under those names. As BR it
// takes BR's command line, writes what BR writes under --storage through the
// same storage library (a backupmeta and data files: backup), reads the
// backupmeta back (restore), prints BR-like progress and summary lines, and
// records its arguments.
//
// Environment:
//
//	STANDIN_BR_ARGS_FILE  append the arguments, one line per run, to this file
//	STANDIN_BR_FAIL       when set, print that message as BR's error and exit 1
//	STANDIN_BR_FILES      number of data files (default 3); file i has 1000*(i+1) bytes
//	STANDIN_BR_TS         the BackupTS to report (default 450000000000000001)
//	STANDIN_BR_HOLD       a directory: after the first data file, create
//	                      "started" in it and block reading the fifo "go"
//	                      there until the test writes to it (hold.go)
//
// `br log start|truncate` succeed; start writes a checkpoint object under
// --storage and records the task (logtask.go), which `br log pause`,
// `resume`, `status --json` and `stop` act on as BR does through PD.
//
//	STANDIN_BR_STATE_DIR  where tasks are recorded (default: br-tasks next to
//	                      STANDIN_BR_ARGS_FILE)
package main

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if filepath.Base(os.Args[0]) == "tikv-ctl" {
			logJSON("ERROR", "Compaction aborted.", map[string]any{"err": err.Error()})
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "[%s] [ERROR] [main.go:1] [\"br failed\"] [error=%q]\n", stamp(), err.Error())
		os.Exit(1)
	}
}

// stamp is BR's log time format.
func stamp() string { return time.Now().Format("2006/01/02 15:04:05.000 -07:00") }

func run(args []string) error {
	if err := recordArgs(args); err != nil {
		return err
	}
	switch filepath.Base(os.Args[0]) {
	case "dumpling":
		return dumpling(args)
	case "tidb-lightning":
		return lightning(args)
	case "tikv-ctl":
		return tikvCtl(args)
	}
	return runBR(args)
}

// recordArgs appends args to $STANDIN_BR_ARGS_FILE when set.
func recordArgs(args []string) error {
	if f := os.Getenv("STANDIN_BR_ARGS_FILE"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintln(fh, strings.Join(args, " "))
		_ = fh.Close()
	}
	return nil
}

// runBR stands in for br.
func runBR(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: br backup|restore <type> [flags]")
	}
	if args[0] == "operator" && args[1] == "base64ify" {
		return base64ify(parseFlags(args[2:]))
	}
	fmt.Printf("Detail BR log in /tmp/br.log.%d\n", os.Getpid())
	if msg := os.Getenv("STANDIN_BR_FAIL"); msg != "" {
		fmt.Printf("[%s] [INFO] [collector.go:77] [\"Full Backup failed summary\"] [total-ranges=0] [ranges-succeed=0] [ranges-failed=1]\n", stamp())
		return fmt.Errorf("%s", msg)
	}
	flags := parseFlags(args[2:])
	if args[0] == "log" && args[1] != "start" && args[1] != "truncate" {
		return controlTask(args[1], flags["task-name"])
	}
	if args[0] == "log" && flags["storage"] == "" {
		fmt.Printf("[%s] [INFO] [stream.go:1] [\"log %s success\"] [task=%s]\n", stamp(), args[1], flags["task-name"])
		return nil
	}
	loc, err := locationOf(flags)
	if err != nil {
		return err
	}
	ctx := context.Background()
	b, err := storage.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	ts := os.Getenv("STANDIN_BR_TS")
	if ts == "" {
		ts = "450000000000000001"
	}
	switch args[0] {
	case "backup":
		return backup(ctx, b, loc, args[1], ts)
	case "restore":
		if full := flags["full-backup-storage"]; full != "" {
			return restoreFrom(ctx, flags, full, args[1], ts)
		}
		return restore(ctx, b, loc, args[1], ts)
	case "log":
		return logTask(ctx, b, loc, args[1], flags)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// backup writes a backupmeta and the data files, then BR's summary.
func backup(ctx context.Context, b storage.Bucket, loc storage.Location, kind, ts string) error {
	n := 3
	if v := os.Getenv("STANDIN_BR_FILES"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	var size int64
	for i := range n {
		data := make([]byte, 1000*(i+1))
		key := fmt.Sprintf("%s/1_%d_%d_default.sst", loc.Prefix, i+2, i+7)
		if err := b.Put(ctx, key, data); err != nil {
			return err
		}
		size += int64(len(data))
		if i == 0 {
			if err := hold(); err != nil {
				return err
			}
		}
		fmt.Printf("%s Backup <%s> %.2f%%\n", title(kind), strings.Repeat("-", i+1), float64(i+1)*100/float64(n))
	}
	meta := []byte("backupmeta end-version=" + ts)
	if err := b.Put(ctx, loc.Prefix+"/backupmeta", meta); err != nil {
		return err
	}
	size += int64(len(meta))
	fmt.Printf("[%s] [INFO] [collector.go:77] [\"%s Backup success summary\"] [total-ranges=%d] [ranges-succeed=%d] [ranges-failed=0] [total-take=1.2s] [total-kv=%d] [total-kv-size=%dB] [average-speed=1kB/s] [backup-data-size(after-compressed)=%dB] [Size=%d] [BackupTS=%s]\n",
		stamp(), title(kind), n, n, n*10, size, size, size, ts)
	return nil
}

// restore reads the backupmeta back (a restore of nothing fails, as BR's does).
func restore(ctx context.Context, b storage.Bucket, loc storage.Location, kind, ts string) error {
	meta, err := storage.Read(ctx, b, loc.Prefix+"/backupmeta")
	if err != nil {
		return fmt.Errorf("reading the backupmeta: %w", err)
	}
	if v, ok := strings.CutPrefix(string(meta), "backupmeta end-version="); ok {
		ts = v
	}
	fmt.Printf("%s Restore <------> 100.00%%\n", title(kind))
	fmt.Printf("[%s] [INFO] [collector.go:77] [\"%s Restore success summary\"] [total-ranges=3] [ranges-succeed=3] [ranges-failed=0] [restore-data-size(after-compressed)=6kB] [Size=6000] [BackupTS=%s] [total-kv=30] [total-kv-size=6kB]\n",
		stamp(), title(kind), ts)
	return nil
}

// logTask stands in for `br log start|truncate`: start writes the task's
// metadata under the storage, truncate prints what it removed.
func logTask(ctx context.Context, b storage.Bucket, loc storage.Location, sub string, flags map[string]string) error {
	switch sub {
	case "start":
		if err := b.Put(ctx, loc.Prefix+"/v1/global_checkpoint/"+flags["task-name"]+".ts", []byte(flags["start-ts"])); err != nil {
			return err
		}
		if err := startTask(flags["task-name"], flags["start-ts"]); err != nil {
			return err
		}
	case "truncate":
		fmt.Printf("[%s] [INFO] [stream.go:1] [\"truncating log backup\"] [until=%s]\n", stamp(), flags["until"])
	default:
		return fmt.Errorf("unknown log command %q", sub)
	}
	fmt.Printf("[%s] [INFO] [stream.go:1] [\"log %s success\"]\n", stamp(), sub)
	return nil
}

// restoreFrom restores (PiTR) from the full backup at url, opened with the
// same provider flags.
func restoreFrom(ctx context.Context, flags map[string]string, url, kind, ts string) error {
	full := maps.Clone(flags)
	full["storage"] = url
	loc, err := locationOf(full)
	if err != nil {
		return err
	}
	b, err := storage.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	return restore(ctx, b, loc, kind, ts)
}

// dumpling stands in for dumpling: it needs TiDB's password and writes a
// metadata file and one SQL file under --output.
func dumpling(args []string) error {
	flags := parseFlags(args)
	if flags["password"] == "" {
		return fmt.Errorf("dumpling: no --password")
	}
	flags["storage"] = flags["output"]
	loc, err := locationOf(flags)
	if err != nil {
		return err
	}
	ctx := context.Background()
	b, err := storage.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	if err := b.Put(ctx, loc.Prefix+"/metadata", []byte("Started dump at: 2026-01-01 00:00:00\n")); err != nil {
		return err
	}
	if err := b.Put(ctx, loc.Prefix+"/shop.orders.000000000.sql", make([]byte, 4096)); err != nil {
		return err
	}
	fmt.Printf("[%s] [INFO] [collector.go:255] [\"backup success summary\"] [total-ranges=1] [total-rows=10]\n", stamp())
	return nil
}

// lightning stands in for TiDB Lightning: it reads the dump's metadata
// from -d (whose provider options are URL query parameters).
func lightning(args []string) error {
	flags := parseFlags(args)
	u, err := url.Parse(flags["d"])
	if err != nil || flags["tidb-password"] == "" {
		return fmt.Errorf("lightning: bad -d %q or no --tidb-password", flags["d"])
	}
	q := u.Query()
	flags["s3.endpoint"], flags["s3.region"] = q.Get("endpoint"), q.Get("region")
	flags["storage"] = u.Scheme + "://" + u.Host + u.Path + "?force-path-style=" + q.Get("force-path-style")
	loc, err := locationOf(flags)
	if err != nil {
		return err
	}
	ctx := context.Background()
	b, err := storage.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	if _, err := storage.Read(ctx, b, loc.Prefix+"/metadata"); err != nil {
		return fmt.Errorf("lightning: %w", err)
	}
	fmt.Printf("[%s] [INFO] [lightning.go:1] [\"the whole procedure completed\"]\n", stamp())
	return nil
}

// title is "Full" for full, "Database" for db, as BR names them.
func title(kind string) string {
	switch kind {
	case "db":
		return "Database"
	case "table":
		return "Table"
	case "raw":
		return "Raw"
	case "point":
		return "PITR"
	}
	return "Full"
}

// parseFlags reads --k=v and -k=v flags.
func parseFlags(args []string) map[string]string {
	out := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			out[strings.TrimLeft(k, "-")] = v
		}
	}
	return out
}

// locationOf reads --storage and the --s3.* flags into a Location.
func locationOf(flags map[string]string) (storage.Location, error) {
	u, err := url.Parse(flags["storage"])
	if err != nil || u.Scheme == "" {
		return storage.Location{}, fmt.Errorf("bad --storage %q", flags["storage"])
	}
	var sp v1alpha1.StorageProvider
	switch u.Scheme {
	case "s3":
		s3 := &v1alpha1.S3StorageProvider{Bucket: u.Host, Prefix: u.Path, Endpoint: flags["s3.endpoint"],
			Region: flags["s3.region"], Provider: flags["s3.provider"]}
		if v := u.Query().Get("force-path-style"); v != "" {
			b := v == "true"
			s3.ForcePathStyle = &b
		}
		sp.S3 = s3
	case "gcs", "gs":
		sp.Gcs = &v1alpha1.GcsStorageProvider{Bucket: u.Host, Prefix: u.Path,
			StorageClass: flags["gcs.storage-class"], ObjectAcl: flags["gcs.predefined-acl"]}
	case "azure":
		sp.Azblob = &v1alpha1.AzblobStorageProvider{Container: u.Host, Prefix: u.Path,
			StorageAccount: flags["azblob.account-name"], AccessTier: flags["azblob.access-tier"]}
	case "local":
		sp.Local = &v1alpha1.LocalStorageProvider{}
		sp.Local.VolumeMount.MountPath = "/"
		sp.Local.Prefix = u.Path
	default:
		return storage.Location{}, fmt.Errorf("the stand-in br knows s3, gcs, azure and local storage, not %q", u.Scheme)
	}
	return storage.LocationOf(sp)
}
