package validation

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TiFlashConfigSections are the keys of spec.tiflash.config the operator
// reads: TiFlash's own config and its proxy's, each a table or a TOML
// document in a string. Another key is not an error (the TiDB Operator
// ignores it): the Unsupported condition names it.
var TiFlashConfigSections = []string{"config", "proxy"}

// tiflashTables lists, per section, the tables the operator writes its
// defaults or TLS paths into: a scalar there would make TiFlash refuse to
// start or the certificate paths impossible to set.
var tiflashTables = map[string][]string{
	"config": {"flash", "flash.proxy", "flash.flash_cluster", "logger", "raft", "storage", "storage.main",
		"storage.raft", "status", "security"},
	"proxy": {"server", "security"},
}

// tiflashLogKeys are TiFlash's log files, each followed by a sidecar that
// must mount the volume holding it.
var tiflashLogKeys = []string{"logger.log", "logger.errorlog", "flash.flash_cluster.log"}

// validateTiFlash checks TiFlash's data disks and its config.
func validateTiFlash(tf *v1alpha1.TiFlashSpec, path *field.Path) field.ErrorList {
	errs := validateStorageClaims(tf.StorageClaims, path.Child("storageClaims"))
	return append(errs, validateTiFlashConfig(tf, path.Child("config"))...)
}

// validateTiFlashConfig checks what the TiFlash builders read from
// spec.tiflash.config: the config and proxy sections, each a table or
// valid TOML, the operator's tables as tables, and log files the log-tailer
// sidecars can see (clean absolute paths on a data disk /data<i> or an
// additional volume mount of TiFlash). An unreadable config as a whole is
// reported by validateConfigs.
func validateTiFlashConfig(tf *v1alpha1.TiFlashSpec, path *field.Path) field.ErrorList {
	cfg := tf.Config
	if cfg == nil || cfg.Items == nil {
		return nil
	}
	var errs field.ErrorList
	for _, key := range sortedItemKeys(cfg.Items) {
		p := path.Child(key)
		if !slices.Contains(TiFlashConfigSections, key) {
			continue // named by the Unsupported condition
		}
		section, err := tiflashSection(cfg.Items[key])
		if err != nil {
			errs = append(errs, field.Invalid(p, "<"+key+">", err.Error()))
			continue
		}
		for _, table := range tiflashTables[key] {
			if v, ok := lookupDotted(section, table); ok && !isTable(v) {
				errs = append(errs, field.Invalid(dotted(p, table), fmt.Sprint(v), "must be a table"))
			}
		}
		if key == "config" {
			errs = append(errs, validateTiFlashLogs(tf, section, p)...)
		}
	}
	return errs
}

// tiflashSection reads one section as a table: a map, or a TOML string.
func tiflashSection(v any) (map[string]any, error) {
	switch t := v.(type) {
	case map[string]any:
		return t, nil
	case string:
		out := map[string]any{}
		if err := toml.Unmarshal([]byte(t), &out); err != nil {
			return nil, fmt.Errorf("not valid TOML: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("must be a table or a TOML string, not %T", v)
	}
}

func validateTiFlashLogs(tf *v1alpha1.TiFlashSpec, section map[string]any, p *field.Path) field.ErrorList {
	dirs := make([]string, 0, len(tf.StorageClaims)+len(tf.AdditionalVolumeMounts))
	for i := range tf.StorageClaims {
		dirs = append(dirs, "/data"+strconv.Itoa(i))
	}
	for _, m := range tf.AdditionalVolumeMounts {
		dirs = append(dirs, strings.TrimSuffix(m.MountPath, "/"))
	}
	var errs field.ErrorList
	for _, key := range tiflashLogKeys {
		v, ok := lookupDotted(section, key)
		if !ok {
			continue
		}
		file, isString := v.(string)
		p := dotted(p, key)
		switch {
		case !isString:
			errs = append(errs, field.Invalid(p, fmt.Sprint(v), "must be a file name"))
		case !path.IsAbs(file) || path.Clean(file) != file:
			errs = append(errs, field.Invalid(p, file, "must be a clean absolute path"))
		case !slices.ContainsFunc(dirs, func(d string) bool { return d != "" && strings.HasPrefix(file, d+"/") }):
			errs = append(errs, field.Invalid(p, file, "must be on a data disk (/data0 …) or an additional volume mount of TiFlash, "+
				"for its log-tailer sidecar to see it"))
		}
	}
	return errs
}

// dotted returns p with the parts of a dotted key as children.
func dotted(p *field.Path, key string) *field.Path {
	parts := strings.Split(key, ".")
	return p.Child(parts[0], parts[1:]...)
}

// lookupDotted returns the value at a dotted key of a table.
func lookupDotted(t map[string]any, key string) (any, bool) {
	parts := strings.Split(key, ".")
	for _, part := range parts[:len(parts)-1] {
		next, ok := t[part].(map[string]any)
		if !ok {
			return nil, false
		}
		t = next
	}
	v, ok := t[parts[len(parts)-1]]
	return v, ok
}

func isTable(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

func sortedItemKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
