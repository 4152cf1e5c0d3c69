//go:build integration

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// The stand-in compaction: `br operator base64ify` and, run as tikv-ctl,
// `tikv-ctl --log-level INFO --log-format json compact-log-backup
// --storage-base64 <b64> --from <ts> --until <ts> -N <n>`, with the real
// tools' contract: base64ify prints only the backend on stdout; tikv-ctl
// logs JSON objects to stderr ("Spawning compaction." with input_max_ts,
// "Finishing compaction." with meta_completed, meta_total,
// bytes_to_compact, bytes_compacted; "Compaction aborted." with err on a
// failure, exit 1). It compacts every log file under the storage's v1/
// (metas: v1/backupmeta/*) into v1/compaction_out/<from>-<until>/.
//
//	STANDIN_TIKV_CTL_FAIL  when set, abort after the first spawn with this err

// base64ify prints the storage flags as the stand-in's backend: base64 of
// their JSON (the real one is BR's StorageBackend protobuf; only the
// stand-in tikv-ctl reads it).
func base64ify(flags map[string]string) error {
	if _, err := locationOf(flags); err != nil {
		return err
	}
	b, err := json.Marshal(flags)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "Credientials are encoded to the base64 string. DON'T share this with untrusted people!")
	fmt.Println(base64.StdEncoding.EncodeToString(b))
	return nil
}

// tikvCtl stands in for tikv-ctl compact-log-backup.
func tikvCtl(args []string) error {
	opts, err := compactOptions(args)
	if err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(opts["storage-base64"])
	if err != nil {
		return fmt.Errorf("invalid --storage-base64: %w", err)
	}
	var flags map[string]string
	if err := json.Unmarshal(raw, &flags); err != nil {
		return fmt.Errorf("invalid --storage-base64: %w", err)
	}
	loc, err := locationOf(flags)
	if err != nil {
		return err
	}
	from, errFrom := strconv.ParseUint(opts["from"], 10, 64)
	until, errUntil := strconv.ParseUint(opts["until"], 10, 64)
	if errFrom != nil || errUntil != nil || until < from {
		return fmt.Errorf("bad --from %q / --until %q", opts["from"], opts["until"])
	}
	ctx := context.Background()
	b, err := storage.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	return compact(ctx, b, loc, from, until)
}

// compactOptions reads tikv-ctl's space-separated flags; it errors unless
// the command is compact-log-backup with JSON logs.
func compactOptions(args []string) (map[string]string, error) {
	opts := map[string]string{}
	var cmd string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			cmd = a
			continue
		}
		if i+1 >= len(args) {
			return nil, fmt.Errorf("flag %s has no value", a)
		}
		opts[strings.TrimLeft(a, "-")] = args[i+1]
		i++
	}
	if cmd != "compact-log-backup" || opts["log-format"] != "json" || opts["storage-base64"] == "" || opts["N"] == "" {
		return nil, fmt.Errorf("usage: tikv-ctl --log-level INFO --log-format json compact-log-backup --storage-base64 <b64> --from <ts> --until <ts> -N <n>")
	}
	return opts, nil
}

// compact copies each log file into the output, logging as tikv-ctl does.
func compact(ctx context.Context, b storage.Bucket, loc storage.Location, from, until uint64) error {
	objs, err := listAll(ctx, b, loc.ObjectPrefix()+"v1/")
	if err != nil {
		return err
	}
	var metas, files []storage.Object
	for _, o := range objs {
		switch {
		case strings.Contains(o.Key, "/compaction_out/"):
		case strings.Contains(o.Key, "/backupmeta/"):
			metas = append(metas, o)
		default:
			files = append(files, o)
		}
	}
	var total uint64
	for _, f := range files {
		total += uint64(f.Size)
	}
	var done uint64
	out := loc.ObjectPrefix() + fmt.Sprintf("v1/compaction_out/%d-%d/", from, until)
	for i, f := range files {
		maxTs := min(from+uint64(i)+1, until)
		logJSON("INFO", "Spawning compaction.", map[string]any{"input_max_ts": maxTs, "input_min_ts": from, "name": path.Base(f.Key)})
		if msg := os.Getenv("STANDIN_TIKV_CTL_FAIL"); msg != "" {
			logJSON("ERROR", "Compaction aborted.", map[string]any{"err": msg})
			os.Exit(1)
		}
		data, err := storage.Read(ctx, b, f.Key)
		if err != nil {
			return err
		}
		if err := b.Put(ctx, out+fmt.Sprintf("%04d.sst", i), data); err != nil {
			return err
		}
		done += uint64(f.Size)
		logJSON("INFO", "Finishing compaction.", map[string]any{"meta_completed": len(metas), "meta_total": len(metas),
			"bytes_to_compact": total, "bytes_compacted": done})
	}
	logJSON("INFO", "All compactions done.", map[string]any{"count": len(files)})
	return nil
}

// listAll lists every object under prefix, by key.
func listAll(ctx context.Context, b storage.Bucket, prefix string) ([]storage.Object, error) {
	var out []storage.Object
	var token []byte
	for {
		objs, next, err := b.ListPage(ctx, prefix, token, 100)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		if next == nil {
			sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
			return out, nil
		}
		token = next
	}
}

// logJSON writes one TiKV JSON log object to stderr.
func logJSON(level, msg string, fields map[string]any) {
	obj := map[string]any{"time": time.Now().Format("2006/01/02 15:04:05.000 -07:00"), "level": level,
		"caller": "compact_log_backup.rs:1", "message": msg}
	for k, v := range fields {
		obj[k] = v
	}
	b, _ := json.Marshal(obj)
	fmt.Fprintln(os.Stderr, string(b))
}
