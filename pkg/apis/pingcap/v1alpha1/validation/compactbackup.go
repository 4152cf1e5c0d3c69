package validation

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// ValidateCompactBackup returns every problem of cb's spec; an empty list
// means valid. A compaction needs startTs and endTs (each a TSO or a
// datetime, endTs not before startTs), concurrency > 0, maxRetryTimes ≥ 0,
// br.cluster (the TidbCluster whose TiKV version picks the tool images; v1.6
// dereferences a missing br) and exactly one storage provider, the log
// backup's. A nil cb is valid.
func ValidateCompactBackup(cb *v1alpha1.CompactBackup) field.ErrorList {
	if cb == nil {
		return nil
	}
	if cb.DecodeError != nil {
		return validateDecoded(cb.DecodeError)
	}
	s, path := &cb.Spec, field.NewPath("spec")
	var errs field.ErrorList
	start, startErrs := validateTSO(s.StartTs, path.Child("startTs"), "start-ts must be set")
	end, endErrs := validateTSO(s.EndTs, path.Child("endTs"), "end-ts must be set")
	errs = append(append(errs, startErrs...), endErrs...)
	if len(startErrs) == 0 && len(endErrs) == 0 && end < start {
		errs = append(errs, field.Invalid(path.Child("endTs"), s.EndTs,
			"until-ts "+strconv.FormatUint(end, 10)+" must be greater than from-ts "+strconv.FormatUint(start, 10)))
	}
	if s.Concurrency <= 0 {
		errs = append(errs, field.Invalid(path.Child("concurrency"), s.Concurrency, "concurrency must be greater than 0"))
	}
	if s.MaxRetryTimes < 0 {
		errs = append(errs, field.Invalid(path.Child("maxRetryTimes"), s.MaxRetryTimes, "maxRetryTimes must not be negative"))
	}
	if s.BR == nil {
		errs = append(errs, field.Required(path.Child("br"), "br.cluster names the TidbCluster whose TiKV version the tools match"))
	} else {
		errs = append(errs, validateBR(s.BR, path.Child("br"))...)
	}
	errs = append(errs, validateStorageProvider(&s.StorageProvider, true, path)...)
	return errs
}

// validateTSO parses value as a TSO (v1alpha1.ParseTSO); empty is Required
// with missing as the message.
func validateTSO(value string, path *field.Path, missing string) (uint64, field.ErrorList) {
	if value == "" {
		return 0, field.ErrorList{field.Required(path, missing)}
	}
	ts, err := v1alpha1.ParseTSO(value)
	if err != nil {
		return 0, field.ErrorList{field.Invalid(path, value, err.Error())}
	}
	return ts, nil
}
