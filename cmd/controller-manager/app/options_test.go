package app

import (
	"flag"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/version"
)

// TestImagesDefaultToThisBuild: without flags the discovery and
// backup-manager images are this build's image at its own version, never a
// floating tag; the flags still override them.
func TestImagesDefaultToThisBuild(t *testing.T) {
	want := "kubetidb/tidb-operator:" + version.Get().GitVersion
	o := NewOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"discovery": o.Controller.TiDBDiscoveryImage, "backup-manager": o.Controller.TiDBBackupManagerImage} {
		if got != want || strings.HasSuffix(got, ":latest") {
			t.Errorf("%s image defaults to %q, want %q", name, got, want)
		}
	}
	if err := fs.Parse([]string{"-tidb-discovery-image=example.com/d:v1"}); err != nil {
		t.Fatal(err)
	}
	if o.Controller.TiDBDiscoveryImage != "example.com/d:v1" {
		t.Errorf("the flag did not override the discovery image: %q", o.Controller.TiDBDiscoveryImage)
	}
}

// TestFeatureGates: --features takes the TiDB Operator's gates as k=v;
// VolumeModifying reaches the controllers, a malformed or unknown entry is
// refused by Validate.
func TestFeatureGates(t *testing.T) {
	t.Parallel()
	o := NewOptions()
	o.Features = "StableScheduling=true,VolumeModifying=true"
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	o.applyFeatures(klog.Background())
	if !o.Controller.VolumeModifying {
		t.Error("VolumeModifying=true did not reach the controllers' configuration")
	}
	for _, bad := range []string{"VolumeModifying", "NoSuchGate=true", "VolumeModifying=maybe"} {
		o := NewOptions()
		o.Features = bad
		if err := o.Validate(); err == nil {
			t.Errorf("--features=%s accepted", bad)
		}
	}
}

// TestTestModeIsNamed: --test-mode is accepted and, since it changes
// nothing here, named in a warning.
func TestTestModeIsNamed(t *testing.T) {
	t.Parallel()
	var logged []string
	logger := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	o := NewOptions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--test-mode"}); err != nil {
		t.Fatalf("--test-mode refused: %v", err)
	}
	o.applyFeatures(logger)
	if len(logged) != 1 || !strings.Contains(logged[0], "--test-mode") {
		t.Errorf("logged %q, want one warning naming --test-mode", logged)
	}
}
