package validation

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
)

// reservedEnvNames are set by the operator in every main container; a user
// value would silently lose or break the start script.
var reservedEnvNames = []string{
	"NAMESPACE", "TZ", "SERVICE_NAME", "PEER_SERVICE_NAME", "HEADLESS_SERVICE_NAME",
	"SET_NAME", "HOSTNAME", "CLUSTER_NAME", "POD_NAME", "BINLOG_ENABLED", "SLOW_LOG_FILE",
}

const envSourceKinds = "fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef"

// component is what the checks common to all components read from one
// spec.<component> (or spec.pdms[i]).
type component struct {
	name, title     string // JSON name ("pd") and display name ("PD")
	path            *field.Path
	spec            *v1alpha1.ComponentSpec
	requests        corev1.ResourceList
	limits          corev1.ResourceList
	config          *v1alpha1.Config
	hasReplicas     bool
	replicas        int32
	baseImage       string
	storageVolumes  []v1alpha1.StorageVolume
	needsDataVolume bool     // requests.storage is the size of a required data PVC
	configTables    []string // config sections that must be TOML tables
	pd              bool     // PD or a PD micro-service
}

// componentsOf lists the configured components of s in declaration order
// (components.All), each PD micro-service of spec.pdms after PD, discovery
// last; nil components and nil spec.pdms entries are skipped.
func componentsOf(s *v1alpha1.TidbClusterSpec, spec *field.Path) []component {
	var out []component
	for _, d := range components.All {
		if d.ListItem != "" {
			continue // the PD micro-services follow PD, by their index (pdmsOf)
		}
		if f, ok := d.Spec(s); ok {
			out = append(out, component{name: d.Name, title: d.Title, path: spec.Child(d.Name), spec: f.Spec,
				requests: f.Resources.Requests, limits: f.Resources.Limits, config: f.Config, configTables: d.ConfigTables,
				hasReplicas: true, replicas: f.Replicas, baseImage: *f.BaseImage, storageVolumes: f.StorageVolumes,
				needsDataVolume: d.NeedsDataVolume, pd: d.Kind == components.KindMember})
		}
		if d.Kind == components.KindMember {
			out = append(out, pdmsOf(s, spec)...) // PD's micro-services follow PD
		}
	}
	return append(out, component{name: "discovery", title: "Discovery", path: spec.Child("discovery"),
		spec: &s.Discovery.ComponentSpec, requests: s.Discovery.Requests, limits: s.Discovery.Limits})
}

// pdmsOf lists the PD micro-services of spec.pdms; nil entries are skipped.
func pdmsOf(s *v1alpha1.TidbClusterSpec, spec *field.Path) []component {
	var out []component
	for i, ms := range s.PDMS {
		if ms == nil {
			continue
		}
		base := ""
		if ms.BaseImage != nil {
			base = *ms.BaseImage
		}
		out = append(out, component{name: "pdms", title: "PD micro-service " + ms.Name, path: spec.Child("pdms").Index(i),
			spec: &ms.ComponentSpec, requests: ms.Requests, limits: ms.Limits, config: ms.Config, hasReplicas: true, replicas: ms.Replicas, baseImage: base,
			storageVolumes: ms.StorageVolumes, pd: true})
	}
	return out
}

// validateComponent runs the checks every component shares: replicas not
// negative, the data volume size (PD, TiKV, Pump), storage volumes, env and
// image strings.
func validateComponent(c component) field.ErrorList {
	var errs field.ErrorList
	if c.hasReplicas && c.replicas < 0 {
		errs = append(errs, field.Invalid(c.path.Child("replicas"), c.replicas, utilvalidation.InclusiveRangeError(0, 1<<31-1)))
	}
	if c.needsDataVolume {
		errs = append(errs, validateStorageRequest(c.requests, c.path.Child("requests", "storage"), c.title+" needs a data volume size")...)
	}
	errs = append(errs, validateStorageVolumes(c.storageVolumes, c.path.Child("storageVolumes"))...)
	errs = append(errs, validateEnv(c.spec.Env, c.path.Child("env"))...)
	errs = append(errs, validateImageString(c.spec.Image, c.path.Child("image"))...)
	errs = append(errs, validateImageString(c.baseImage, c.path.Child("baseImage"))...)
	if c.spec.Version != nil {
		errs = append(errs, validateVersion(*c.spec.Version, c.path.Child("version"))...)
	}
	errs = append(errs, validateResourceSizes(c.requests, c.path.Child("requests"))...)
	errs = append(errs, validateResourceSizes(c.limits, c.path.Child("limits"))...)
	errs = append(errs, validateConfigTables(c.configTables, c.config, c.path.Child("config"))...)
	return errs
}

// validateComponentSpecifics runs the checks of single components: TiKV's
// evict-leader timeout, TiFlash's data disks and config, TiProxy's TLS and
// config, TiCDC's sink TLS Secrets and flag items, Pump's config, and the TiDB Service ports.
func validateComponentSpecifics(s *v1alpha1.TidbClusterSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if kv := s.TiKV; kv != nil && kv.EvictLeaderTimeout != nil {
		errs = append(errs, validateDuration(*kv.EvictLeaderTimeout, spec.Child("tikv", "evictLeaderTimeout"))...)
	}
	if tf := s.TiFlash; tf != nil {
		errs = append(errs, validateTiFlash(tf, spec.Child("tiflash"))...)
	}
	if s.TiProxy != nil {
		errs = append(errs, validateTiProxy(s, spec.Child("tiproxy"))...)
	}
	if cdc := s.TiCDC; cdc != nil {
		errs = append(errs, validateTiCDC(cdc, spec.Child("ticdc"))...)
	}
	if p := s.Pump; p != nil {
		errs = append(errs, validatePump(p, spec.Child("pump"))...)
	}
	if db := s.TiDB; db != nil && db.Service != nil {
		errs = append(errs, validateTiDBService(db.Service, spec.Child("tidb", "service"))...)
	}
	if db := s.TiDB; db != nil {
		errs = append(errs, validateLogVolume(db.SlowLogVolumeName, db.StorageVolumes, &db.ComponentSpec, spec.Child("tidb", "slowLogVolumeName"))...)
	}
	// TiKV reads its log volumes only for logs it writes separately.
	if kv := s.TiKV; kv != nil && kv.SeparateRocksDBLog != nil && *kv.SeparateRocksDBLog {
		errs = append(errs, validateLogVolume(kv.RocksDBLogVolumeName, kv.StorageVolumes, &kv.ComponentSpec, spec.Child("tikv", "rocksDBLogVolumeName"))...)
	}
	if kv := s.TiKV; kv != nil && kv.SeparateRaftLog != nil && *kv.SeparateRaftLog {
		errs = append(errs, validateLogVolume(kv.RaftLogVolumeName, kv.StorageVolumes, &kv.ComponentSpec, spec.Child("tikv", "raftLogVolumeName"))...)
	}
	return errs
}

// validateLogVolume requires a log volume name to name one of the
// component's storageVolumes or additionalVolumeMounts, where the log
// tailer reads the log from.
func validateLogVolume(name string, vols []v1alpha1.StorageVolume, cs *v1alpha1.ComponentSpec, path *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	for _, v := range vols {
		if v.Name == name {
			return nil
		}
	}
	for _, m := range cs.AdditionalVolumeMounts {
		if m.Name == name {
			return nil
		}
	}
	return field.ErrorList{field.NotFound(path, name)}
}

// validateStorageRequest requires requests.storage to be present and positive.
func validateStorageRequest(requests corev1.ResourceList, path *field.Path, missing string) field.ErrorList {
	q, ok := requests[corev1.ResourceStorage]
	if !ok {
		return field.ErrorList{field.Required(path, missing)}
	}
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be greater than zero")}
	}
	if q.Cmp(maxVolumeSize) > 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be at most "+maxVolumeSizeText+" (one volume)")}
	}
	return nil
}

// maxVolumeSize bounds one data volume: no disk a member could use is
// larger, so a bigger request is a typo (1e30, 999Ei) that no StorageClass
// could provision.
var maxVolumeSize = resource.MustParse(maxVolumeSizeText)

// maxVolumeSizeText is maxVolumeSize as written: Quantity.String caches its
// text in the value, so concurrent validations must not call it on the
// shared variable.
const maxVolumeSizeText = "1Pi"

func validateStorageClaims(claims []v1alpha1.StorageClaim, path *field.Path) field.ErrorList {
	if len(claims) == 0 {
		return field.ErrorList{field.Required(path, "TiFlash needs at least one data disk")}
	}
	var errs field.ErrorList
	for i, c := range claims {
		p := path.Index(i).Child("resources", "requests", "storage")
		errs = append(errs, validateStorageRequest(c.Resources.Requests, p, "each TiFlash data disk needs a size")...)
	}
	return errs
}

// validateStorageVolumes requires DNS-label names unique within the
// component (they name PVC templates) and positive sizes.
func validateStorageVolumes(vols []v1alpha1.StorageVolume, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range vols {
		name := path.Index(i).Child("name")
		switch msgs := utilvalidation.IsDNS1123Label(v.Name); {
		case v.Name == "":
			errs = append(errs, field.Required(name, "a storage volume needs a name"))
		case len(msgs) > 0:
			errs = append(errs, field.Invalid(name, v.Name, strings.Join(msgs, "; ")))
		case seen[v.Name]:
			errs = append(errs, field.Duplicate(name, v.Name))
		}
		seen[v.Name] = true
		errs = append(errs, validateQuantity(v.StorageSize, path.Index(i).Child("storageSize"))...)
	}
	return errs
}

// validateQuantity requires s to parse as a positive quantity such as 10Gi.
func validateQuantity(s string, path *field.Path) field.ErrorList {
	if s == "" {
		return field.ErrorList{field.Required(path, "a size such as 10Gi is required")}
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return field.ErrorList{field.Invalid(path, s, "must be a quantity such as 10Gi")}
	}
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(path, s, "must be greater than zero")}
	}
	return nil
}

// validateEnv rejects unnamed and reserved variables and valueFrom sources
// other than exactly one of fieldRef, resourceFieldRef, configMapKeyRef and
// secretKeyRef.
func validateEnv(env []corev1.EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		p := path.Index(i)
		switch {
		case e.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "an environment variable needs a name"))
		case e.Name == "TZ":
			errs = append(errs, field.Invalid(p.Child("name"), e.Name, "is reserved: the operator sets it from spec.timezone"))
		case slices.Contains(reservedEnvNames, e.Name):
			errs = append(errs, field.Invalid(p.Child("name"), e.Name, "is reserved: the operator sets it"))
		}
		if e.ValueFrom != nil {
			errs = append(errs, validateEnvSource(e, p.Child("valueFrom"))...)
		}
	}
	return errs
}

func validateEnvSource(e corev1.EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	src := e.ValueFrom
	if e.Value != "" {
		errs = append(errs, field.Forbidden(path, "may not be set together with value"))
	}
	if src.FileKeyRef != nil {
		errs = append(errs, field.Forbidden(path.Child("fileKeyRef"), "only "+envSourceKinds+" are supported"))
	}
	n := 0
	for _, set := range []bool{src.FieldRef != nil, src.ResourceFieldRef != nil, src.ConfigMapKeyRef != nil, src.SecretKeyRef != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0 && src.FileKeyRef == nil:
		errs = append(errs, field.Required(path, "set one of "+envSourceKinds))
	case n > 1:
		errs = append(errs, field.Invalid(path, fmt.Sprintf("%d sources", n), "set exactly one of "+envSourceKinds))
	}
	return errs
}

// validateImageString rejects whitespace in an image, base image or version,
// because it would produce an image reference the kubelet cannot pull.
func validateImageString(s string, path *field.Path) field.ErrorList {
	if strings.ContainsFunc(s, unicode.IsSpace) {
		return field.ErrorList{field.Invalid(path, s, "must not contain whitespace")}
	}
	if s != "" && (len(s) > maxImageLength || !imageReference.MatchString(s)) {
		return field.ErrorList{field.Invalid(path, shorten(s), "must be an image reference such as pingcap/tikv, "+
			"registry.example:5000/pingcap/tikv:v8.5.0 or pingcap/tikv@sha256:<digest>")}
	}
	return nil
}

// validateVersion requires an image tag (what is appended to baseImage
// after a colon), such as v8.5.0 or nightly.
func validateVersion(s string, path *field.Path) field.ErrorList {
	if s != "" && !imageTag.MatchString(s) {
		return field.ErrorList{field.Invalid(path, shorten(s), "must be an image tag such as v8.5.0: "+
			"letters, digits, '_', '.' and '-', at most 128, not starting with '.' or '-'")}
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// validateDuration requires a non-negative Go duration such as 1500m.
func validateDuration(s string, path *field.Path) field.ErrorList {
	d, err := time.ParseDuration(s)
	if err != nil {
		return field.ErrorList{field.Invalid(path, s, "must be a Go duration such as 90s or 1h30m")}
	}
	if d < 0 {
		return field.ErrorList{field.Invalid(path, s, "must not be negative")}
	}
	return nil
}

// validateTiDBService checks the Service port (1–65535) and node ports
// (0–65535, where 0 lets Kubernetes allocate one).
func validateTiDBService(svc *v1alpha1.TiDBServiceSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if svc.Port != nil {
		errs = append(errs, validatePort(int(*svc.Port), 1, path.Child("port"))...)
	}
	if svc.MySQLNodePort != nil {
		errs = append(errs, validatePort(*svc.MySQLNodePort, 0, path.Child("mysqlNodePort"))...)
	}
	if svc.StatusNodePort != nil {
		errs = append(errs, validatePort(*svc.StatusNodePort, 0, path.Child("statusNodePort"))...)
	}
	for i, p := range svc.AdditionalPorts {
		errs = append(errs, validatePort(int(p.Port), 1, path.Child("additionalPorts").Index(i).Child("port"))...)
		errs = append(errs, validatePort(int(p.NodePort), 0, path.Child("additionalPorts").Index(i).Child("nodePort"))...)
	}
	return errs
}

func validatePort(port, lowest int, path *field.Path) field.ErrorList {
	if port < lowest || port > 65535 {
		return field.ErrorList{field.Invalid(path, port, utilvalidation.InclusiveRangeError(lowest, 65535))}
	}
	return nil
}
