package precheck

import (
	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxConfigMapBytes is the API server's limit on a ConfigMap's data.
const maxConfigMapBytes = 1 << 20

// checkConfigMap checks a ConfigMap: a DNS-1123 subdomain name, metadata,
// keys of data and binaryData valid and not in both, and at most 1 MiB of
// values in all.
func checkConfigMap(cm *corev1.ConfigMap, root *field.Path) field.ErrorList {
	errs := checkObjectMeta(&cm.ObjectMeta, nameIsSubdomain, root.Child("metadata"))
	size := 0
	for _, k := range sortedKeys(cm.Data) {
		errs = append(errs, invalidAll(root.Child("data").Key(k), k, utilvalidation.IsConfigMapKey(k))...)
		size += len(cm.Data[k])
	}
	for _, k := range sortedKeys(cm.BinaryData) {
		kp := root.Child("binaryData").Key(k)
		errs = append(errs, invalidAll(kp, k, utilvalidation.IsConfigMapKey(k))...)
		if _, dup := cm.Data[k]; dup {
			errs = append(errs, field.Invalid(kp, k, "duplicate of key present in data"))
		}
		size += len(cm.BinaryData[k])
	}
	if size > maxConfigMapBytes {
		errs = append(errs, field.TooLong(root.Child("data"), "", maxConfigMapBytes))
	}
	return errs
}
