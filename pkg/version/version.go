// Package version reports the build's version, set at link time with
// -ldflags "-X github.com/kubetidb/tidb-operator/pkg/version.gitVersion=v0.1.0 ...".
package version

import (
	"fmt"
	"runtime"
)

var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = "unknown"
	buildDate  = "unknown"
)

// Info describes a build.
type Info struct {
	GitVersion string `json:"gitVersion"`
	GitCommit  string `json:"gitCommit"`
	BuildDate  string `json:"buildDate"`
	GoVersion  string `json:"goVersion"`
	Platform   string `json:"platform"`
}

// Get returns the build's version information.
func Get() Info {
	return Info{
		GitVersion: gitVersion,
		GitCommit:  gitCommit,
		BuildDate:  buildDate,
		GoVersion:  runtime.Version(),
		Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String formats the information on one line.
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, built %s, %s, %s)", i.GitVersion, i.GitCommit, i.BuildDate, i.GoVersion, i.Platform)
}
