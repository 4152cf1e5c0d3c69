package command

import (
	"strconv"

	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// Base64ify is `br operator base64ify --storage=<url> <provider flags>`,
// which prints loc as the base64 storage backend tikv-ctl takes.
func Base64ify(loc storage.Location) []string {
	args := []string{"operator", "base64ify", "--storage=" + StorageURL(loc)}
	return append(args, StorageFlags(loc)...)
}

// CompactLogBackup is `tikv-ctl --log-level INFO --log-format json
// compact-log-backup --storage-base64 <b64> --from <from> --until <until>
// -N <concurrency>`: it compacts the log backup files in [from, until] of
// the storage b64 names, logging JSON objects to stderr.
func CompactLogBackup(b64 string, from, until uint64, concurrency int) []string {
	return []string{"--log-level", "INFO", "--log-format", "json", "compact-log-backup",
		"--storage-base64", b64, "--from", strconv.FormatUint(from, 10), "--until", strconv.FormatUint(until, 10),
		"-N", strconv.Itoa(concurrency)}
}
