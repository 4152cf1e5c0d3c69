//go:build bench

package main

import (
	"fmt"
	"os"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// bigShape is the shape whose replicas the BENCH_BIG_* variables override.
const bigShape = "big"

// bigReplicas are the big shape's replica counts a variable may lower (or
// raise) for a quick run, e.g. BENCH_BIG_TIKV=10.
func bigReplicas(tc *v1alpha1.TidbCluster) map[string]*int32 {
	s := &tc.Spec
	m := map[string]*int32{}
	if s.PD != nil {
		m["BENCH_BIG_PD"] = &s.PD.Replicas
	}
	if s.TiKV != nil {
		m["BENCH_BIG_TIKV"] = &s.TiKV.Replicas
	}
	if s.TiDB != nil {
		m["BENCH_BIG_TIDB"] = &s.TiDB.Replicas
	}
	if s.TiFlash != nil {
		m["BENCH_BIG_TIFLASH"] = &s.TiFlash.Replicas
	}
	if s.TiCDC != nil {
		m["BENCH_BIG_TICDC"] = &s.TiCDC.Replicas
	}
	return m
}

// scaleBig applies the BENCH_BIG_* variables that getenv returns to tc and
// returns the YAML of the result; it reports whether any applied. It errors
// on a value that is not a whole number ≥ 1.
func scaleBig(tc *v1alpha1.TidbCluster, getenv func(string) string) ([]byte, bool, error) {
	changed := false
	for name, dst := range bigReplicas(tc) {
		v := getenv(name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			return nil, false, fmt.Errorf("%s: %q is not a whole number ≥ 1", name, v)
		}
		*dst, changed = int32(n), true
	}
	if !changed {
		return nil, false, nil
	}
	out := tc.DeepCopy()
	out.Status = v1alpha1.TidbClusterStatus{}
	raw, err := yaml.Marshal(out)
	return raw, true, err
}

// applyBigEnv scales the big shape by the process's BENCH_BIG_* variables;
// any other shape is returned as it is.
func applyBigEnv(name string, tc *v1alpha1.TidbCluster, raw []byte) ([]byte, error) {
	if name != bigShape {
		return raw, nil
	}
	scaled, changed, err := scaleBig(tc, os.Getenv)
	if err != nil || !changed {
		return raw, err
	}
	return scaled, nil
}
