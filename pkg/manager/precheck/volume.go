package precheck

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxFileMode is the largest file mode a volume may project (0777).
const maxFileMode = 0o777

var hostPathTypes = []corev1.HostPathType{corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev}

// checkVolumes checks the pod's volumes: DNS-1123 label names, unique, at
// most one source each (none is fine: the API server defaults to an
// emptyDir), and the fields of the common sources. It returns the set of
// volume names for the mount checks.
func checkVolumes(vols []corev1.Volume, p *field.Path) (map[string]bool, field.ErrorList) {
	names := map[string]bool{}
	var errs field.ErrorList
	for i := range vols {
		v, vp := &vols[i], p.Index(i)
		errs = append(errs, dnsLabel(vp.Child("name"), v.Name)...)
		if v.Name != "" && names[v.Name] {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		names[v.Name] = true
		if countSet(&v.VolumeSource) > 1 {
			errs = append(errs, field.Forbidden(vp, "may not specify more than 1 volume type"))
		}
		errs = append(errs, checkVolumeSource(&v.VolumeSource, vp)...)
	}
	return names, errs
}

func checkVolumeSource(s *corev1.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.EmptyDir != nil && s.EmptyDir.SizeLimit != nil {
		errs = append(errs, nonNegativeQuantity(p.Child("emptyDir", "sizeLimit"), *s.EmptyDir.SizeLimit)...)
	}
	if s.HostPath != nil {
		if s.HostPath.Path == "" {
			errs = append(errs, field.Required(p.Child("hostPath", "path"), ""))
		}
		if s.HostPath.Type != nil {
			errs = append(errs, oneOf(p.Child("hostPath", "type"), *s.HostPath.Type, hostPathTypes...)...)
		}
	}
	if s.PersistentVolumeClaim != nil && s.PersistentVolumeClaim.ClaimName == "" {
		errs = append(errs, field.Required(p.Child("persistentVolumeClaim", "claimName"), ""))
	}
	if cm := s.ConfigMap; cm != nil {
		cp := p.Child("configMap")
		errs = append(errs, requiredSubdomain(cp.Child("name"), cm.Name)...)
		errs = append(errs, fileMode(cp.Child("defaultMode"), cm.DefaultMode)...)
		errs = append(errs, checkKeyToPaths(cm.Items, cp.Child("items"))...)
	}
	if sec := s.Secret; sec != nil {
		sp := p.Child("secret")
		errs = append(errs, requiredSubdomain(sp.Child("secretName"), sec.SecretName)...)
		errs = append(errs, fileMode(sp.Child("defaultMode"), sec.DefaultMode)...)
		errs = append(errs, checkKeyToPaths(sec.Items, sp.Child("items"))...)
	}
	if d := s.DownwardAPI; d != nil {
		errs = append(errs, fileMode(p.Child("downwardAPI", "defaultMode"), d.DefaultMode)...)
		errs = append(errs, checkDownwardAPIFiles(d.Items, p.Child("downwardAPI", "items"))...)
	}
	if pr := s.Projected; pr != nil {
		errs = append(errs, checkProjected(pr, p.Child("projected"))...)
	}
	return errs
}

// checkKeyToPaths: each item names a key and a relative path.
func checkKeyToPaths(items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		ip := p.Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		}
		errs = append(errs, filePath(ip.Child("path"), it.Path)...)
		errs = append(errs, fileMode(ip.Child("mode"), it.Mode)...)
	}
	return errs
}

func checkDownwardAPIFiles(items []corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range items {
		it, ip := &items[i], p.Index(i)
		errs = append(errs, filePath(ip.Child("path"), it.Path)...)
		errs = append(errs, fileMode(ip.Child("mode"), it.Mode)...)
		if (it.FieldRef == nil) == (it.ResourceFieldRef == nil) {
			errs = append(errs, field.Invalid(ip, "", "must specify exactly one of `fieldRef` and `resourceFieldRef`"))
		}
		if it.FieldRef != nil && it.FieldRef.FieldPath == "" {
			errs = append(errs, field.Required(ip.Child("fieldRef", "fieldPath"), ""))
		}
	}
	return errs
}

// checkProjected: each source sets one projection, with its own checks.
func checkProjected(pr *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	errs := fileMode(p.Child("defaultMode"), pr.DefaultMode)
	for i := range pr.Sources {
		s, sp := &pr.Sources[i], p.Child("sources").Index(i)
		if countSet(s) > 1 {
			errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
		if s.ConfigMap != nil {
			errs = append(errs, checkKeyToPaths(s.ConfigMap.Items, sp.Child("configMap", "items"))...)
		}
		if s.Secret != nil {
			errs = append(errs, checkKeyToPaths(s.Secret.Items, sp.Child("secret", "items"))...)
		}
		if s.DownwardAPI != nil {
			errs = append(errs, checkDownwardAPIFiles(s.DownwardAPI.Items, sp.Child("downwardAPI", "items"))...)
		}
		if t := s.ServiceAccountToken; t != nil && t.Path == "" {
			errs = append(errs, field.Required(sp.Child("serviceAccountToken", "path"), ""))
		}
	}
	return errs
}

// filePath: a required path inside the volume, not starting with "..".
func filePath(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return relativePath(p, v, true)
}

// fileMode: an optional mode within 0–0777.
func fileMode(p *field.Path, m *int32) field.ErrorList {
	if m == nil || (*m >= 0 && *m <= maxFileMode) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, *m, "must be a number between 0 and 0777 (octal), both inclusive")}
}

// checkVolumeMounts: each mount names a volume of the pod, has a mount path
// unique in the container, a relative subPath without "..", not both
// subPath and subPathExpr, and a known propagation mode.
func checkVolumeMounts(mounts []corev1.VolumeMount, volumes map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := map[string]bool{}
	for i, m := range mounts {
		mp := p.Index(i)
		switch {
		case m.Name == "":
			errs = append(errs, field.Required(mp.Child("name"), ""))
		case !volumes[m.Name]:
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		} else if paths[m.MountPath] {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths[m.MountPath] = true
		if m.SubPath != "" && m.SubPathExpr != "" {
			errs = append(errs, field.Invalid(mp.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
		}
		errs = append(errs, relativePath(mp.Child("subPath"), m.SubPath, false)...)
		errs = append(errs, relativePath(mp.Child("subPathExpr"), m.SubPathExpr, false)...)
		if m.MountPropagation != nil {
			errs = append(errs, oneOf(mp.Child("mountPropagation"), *m.MountPropagation, mountPropagations...)...)
		}
	}
	return errs
}
