package summary

import (
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		line       string
		wantOK     bool
		wantOKSucc bool
		commitTs   string
		totalKV    uint64
		kvSize     string
		size       int64
	}{{
		name:       "full backup success",
		line:       `[2024/02/04 22:55:12.429 -05:00] [INFO] [collector.go:77] ["Full Backup success summary"] [total-ranges=19] [ranges-succeed=19] [ranges-failed=0] [backup-checksum=168.863382ms] [total-take=6.578538393s] [total-kv=1398] [total-kv-size=408.8kB] [average-speed=62.15kB/s] [backup-data-size(after-compressed)=102.5kB] [Size=102451] [BackupTS=447518343168000000]`,
		wantOK:     true,
		wantOKSucc: true,
		commitTs:   "447518343168000000",
		totalKV:    1398,
		kvSize:     "408.8kB",
		size:       102451,
	}, {
		name:       "raw backup spells backup-ts",
		line:       `[2022/09/20 18:01:10.125 +08:00] [INFO] [collector.go:67] ["Raw backup success summary"] [total-ranges=3] [backup-ts=436120585518448641] [total-kv=100000] [total-kv-size=108.7MB]`,
		wantOK:     true,
		wantOKSucc: true,
		commitTs:   "436120585518448641",
		totalKV:    100000,
		kvSize:     "108.7MB",
	}, {
		name:   "failed summary",
		line:   `[2024/01/01 00:00:00.000 +00:00] [INFO] [collector.go:77] ["Full Backup failed summary"] [total-ranges=0] [ranges-succeed=0] [ranges-failed=0]`,
		wantOK: true,
	}, {
		name: "progress bar is no summary",
		line: `Full Backup <-----------------------------------------> 100.00%`,
	}, {
		name: "other log line",
		line: `[2024/01/01 00:00:00.000 +00:00] [INFO] [client.go:1] ["[pd] exit tso dispatcher"] [dc-location=global]`,
	}, {
		name: "unclosed bracket",
		line: `[2024/01/01] [INFO] ["Full Backup success summary`,
	}, {
		name:       "malformed fields are skipped",
		line:       `["Full Backup success summary"] [total-kv] [=3] [BackupTS=notanumber] [Size=-4] [total-kv=x]`,
		wantOK:     true,
		wantOKSucc: true,
	}, {
		name: "empty",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, ok := Parse(tc.line)
			if ok != tc.wantOK || s.Succeeded != tc.wantOKSucc {
				t.Fatalf("Parse ok=%v succeeded=%v, want %v %v", ok, s.Succeeded, tc.wantOK, tc.wantOKSucc)
			}
			if got := s.CommitTs(); got != tc.commitTs {
				t.Errorf("CommitTs = %q, want %q", got, tc.commitTs)
			}
			kv, kvOK := s.TotalKV()
			if kvOK != (tc.totalKV != 0) || kv != tc.totalKV {
				t.Errorf("TotalKV = %d %v, want %d", kv, kvOK, tc.totalKV)
			}
			if got := s.TotalKVSize(); got != tc.kvSize {
				t.Errorf("TotalKVSize = %q, want %q", got, tc.kvSize)
			}
			size, sizeOK := s.DataSize()
			if sizeOK != (tc.size != 0) || (sizeOK && size != tc.size) {
				t.Errorf("DataSize = %d %v, want %d", size, sizeOK, tc.size)
			}
		})
	}
}

func TestLast(t *testing.T) {
	t.Parallel()
	lines := []string{
		`["Full Backup success summary"] [BackupTS=1]`,
		`Checksum <------> 100.00%`,
		`["Full Backup success summary"] [BackupTS=2]`,
		`Detail BR log in /tmp/br.log`,
	}
	s, ok := Last(lines)
	if !ok || s.CommitTs() != "2" {
		t.Errorf("Last = %+v %v, want BackupTS 2", s, ok)
	}
	if _, ok := Last([]string{"no", "summary"}); ok {
		t.Error("Last found a summary in lines without one")
	}
}
